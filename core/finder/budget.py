"""What a CPU trial may use: one figure for the finder's default capacity on the CPU and for the window's
"fits (… to spare)", so the two never disagree, and the largest batch a search may try.

The machine's total is never the figure: other programs and this app already hold part of it, and a trial
planned against the total took 16 GB of a 24 GB machine. What is available now (what other programs and this
app leave) is, lowered by what the tightest limit on this process leaves (`ulimit -v`, `ulimit -d`, a
cgroup: `gpu_train_monitor.device.host_memory.host_free_bytes`). A trial process inherits those limits in an
address space of its own, which starts smaller than this one (no Qt, no window), so what this process has left
under `ulimit -v` is on the safe side for it.

A process that trains holds memory of its own besides the step a prediction traces: Python, PyTorch's
libraries, their thread pools. The finder's warm trial process measures it (`remember_own_bytes`); until one
has, `OWN_BYTES_GUESS` stands in. Imports no torch: the window reads it before torch has loaded.
"""

from __future__ import annotations

from ..config.run_config import RunConfig
from ..device.host_memory import host_free_bytes

OWN_BYTES_GUESS = 700 * 10**6  # a CPU process that imported torch and ran one small step (docs/will-it-fit.md)
GUARD_SLACK_BYTES = 2**30  # a trial's data segment beyond what it holds resident: thread stacks, reserved heap

_measured_own_bytes: int | None = None


def cpu_trial_bytes() -> int:
    """Bytes a CPU trial process may hold at its peak, its own memory included, read now."""
    return host_free_bytes()


def own_bytes() -> int:
    """What a process that trains on the CPU holds outside the step: as a trial process last measured it in
    this process, else `OWN_BYTES_GUESS`."""
    return OWN_BYTES_GUESS if _measured_own_bytes is None else _measured_own_bytes


def remember_own_bytes(measured: int) -> None:
    """A warm trial process's resident memory before any trial (`gpu_train_monitor.finder.warm`)."""
    global _measured_own_bytes
    _measured_own_bytes = int(measured)


def guard_bytes(capacity: int) -> int:
    """The data-segment limit (RLIMIT_DATA) a CPU trial process runs under: what it plans for, never above what
    the machine has available, plus slack for what the segment counts beyond resident memory. A trial that would
    grow past it fails as out of memory in its own process instead of taking the machine (swap, the kernel's
    out-of-memory killer picking some other program)."""
    return min(int(capacity), cpu_trial_bytes()) + GUARD_SLACK_BYTES


def largest_batch(config: RunConfig, max_batch: int) -> int:
    """`max_batch`, lowered to the training set's size where that is known before loading anything (the
    synthetic dataset's `synthetic_samples`, a built-in dataset's training split): a larger batch cannot run,
    so no trial tries one and no answer says one."""
    from ..data.datasets import train_size_hint

    train = train_size_hint(config)
    return max_batch if train is None else max(min(max_batch, train), 1)
