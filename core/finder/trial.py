"""`python -m gpu_train_monitor.finder.trial`: one batch-size trial in a fresh process (the CPU path of the finder).

Reads {"config": {...}, "batch_size": n, "steps": k} on stdin, runs k real training steps on the CPU
and prints {"peak_bytes": ...}: this process's peak resident memory, which nothing else has touched.
Bad input it meets (your own model or dataset failing to import or to fit) is printed as
{"user_error": message, "field": field or null, "message": the message (without the field) as
gpu_train_monitor.base.text writes it}, for the finder to report as the run would.

Kept warm (`gpu_train_monitor.finder.warm`): a first line {"serve": true} makes this process answer one request a line
until its stdin closes, so torch is imported once per search, not once per trial. Before each trial the
kernel's record of the peak resident memory is reset to what is resident now (/proc/self/clear_refs, "5"),
after it the trial's tensors are freed and the C allocator gives its free memory back (malloc_trim), so a
trial's peak is its own, on top of a process that holds what a fresh one would. {"idle": config} warms the
process with one step at batch 1 and answers {"rss_bytes": ..., "resettable": bool}: what the process holds
before any trial, the part of a trial's peak that no prediction of the step includes.
"""

from __future__ import annotations

import json
import resource
import sys
from typing import Any

from ..config.run_config import RunConfig

ANSWER = "trial answer: "  # a served answer's line starts so: your own model's code may print lines of its own


def main() -> int:
    request = json.loads(sys.stdin.readline())
    if request.get("serve"):
        return serve()
    answer = run_trial(RunConfig.from_dict(request["config"]), int(request["batch_size"]), int(request["steps"]))
    if answer.get("out_of_memory"):
        print("MemoryError: the trial ran out of memory", file=sys.stderr)  # the parent's "too big" marker
        return 3
    if "user_error" not in answer:
        answer = {"peak_bytes": peak_rss_bytes()}
    print(json.dumps(answer))
    return 0


def run_trial(config: RunConfig, batch_size: int, steps: int, create_state: bool = False) -> dict:
    """`steps` real training steps at `batch_size`: {} when they ran, {"out_of_memory": true}, or the bad input
    met as {"user_error": ...} (see the module doc). The trial's tensors are gone when this returns.

    `create_state`: the optimizer's state (momentum, Adam's moments) is made first by one update on zero
    gradients, so the first real step already peaks as every later one does: one step is a whole trial."""
    from ..base.errors import ConfigError, UserError
    from ..base.text import message_of, message_to_json
    from ..device.devices import resolve_device
    from ..memory import oom
    from .parts import trial_parts

    device = resolve_device(config.device)
    try:
        trainer, images, labels = trial_parts(config, batch_size, device)
        if create_state:
            _create_state(trainer.optimizer)
        for _ in range(steps):
            trainer.step(images, labels)
    except UserError as exc:
        field = exc.field if isinstance(exc, ConfigError) else None
        said = exc.detail if isinstance(exc, ConfigError) else message_of(exc)
        return {"user_error": str(exc), "field": field, "message": message_to_json(said)}
    except (MemoryError, RuntimeError) as exc:
        if not oom.is_out_of_memory(exc):
            raise
        return {"out_of_memory": True}
    return {}


def serve() -> int:
    """Answer trial requests one a line until stdin closes (see the module doc)."""
    import gc

    import torch  # noqa: F401 - imported once, before any trial: its libraries are part of every peak

    from ..engine import recipe  # noqa: F401

    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if "idle" in request:
            run_trial(RunConfig.from_dict(request["idle"]), 1, 1)  # first-step set-up: thread pools, kernels
            gc.collect()
            _give_memory_back()
            answer = {"rss_bytes": rss_bytes(), "resettable": _reset_peak()}
        else:
            gc.collect()
            _give_memory_back()
            base = rss_bytes()
            resettable = _reset_peak()
            config = RunConfig.from_dict(request["config"])
            answer = run_trial(config, int(request["batch_size"]), int(request["steps"]), bool(request.get("state")))
            if not answer:
                answer = {"peak_bytes": peak_rss_bytes(), "base_bytes": base, "resettable": resettable}
        print(ANSWER + json.dumps(answer), flush=True)
    return 0


def _create_state(optimizer: Any) -> None:
    import torch

    params = [p for group in optimizer.param_groups for p in group["params"] if p.requires_grad]
    for param in params:
        param.grad = torch.zeros_like(param)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def _reset_peak() -> bool:
    """Reset the kernel's peak resident memory of this process to what is resident now (Linux 4.0 and later)."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear_refs:
            clear_refs.write("5")
        return True
    except OSError:
        return False


def _give_memory_back() -> None:
    """glibc keeps freed memory for later allocations: resident, it would count in the next trial's peak."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl)
        pass


def rss_bytes() -> int:
    """This process's resident memory now."""
    import psutil

    return int(psutil.Process().memory_info().rss)


def peak_rss_bytes() -> int:
    """This process's own peak resident memory.

    On Linux, getrusage's ru_maxrss survives fork and exec: a trial started by a large parent (the
    window holds over 1 GB) reports at least the parent's size, whatever it trained. VmHWM in
    /proc/self/status belongs to the process's own address space, made new at exec. Elsewhere
    ru_maxrss is what there is (bytes on macOS, KiB on the others)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024  # "VmHWM:   123456 kB"
    except (OSError, ValueError, IndexError):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


if __name__ == "__main__":
    sys.exit(main())
