"""Out of memory, in one place: recognising the error, reading the allocator's message, recovering.

Used by the training session, the batch-size finder and its trial process, so all three agree on what
an out-of-memory error is and recover in the same order.

Recovery happens *outside* the `except` block: a live exception holds the failing frames, and those
hold the step's tensors (PyTorch's FAQ on out-of-memory), so memory cannot be given back while it is
being handled. Callers keep the message (`str(exc)`), leave the block, drop their references, then
call `release()`.
"""

from __future__ import annotations

import gc
import re
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..base.text import Message

if TYPE_CHECKING:
    import torch

    from ..device.host_memory import ProcessLimit
    from ..events.events import MemorySample, OutOfMemory
    from .oom_autopsy import OomAutopsy

_UNITS = {"B": 1, "bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
_SIZE = r"([\d.]+) (B|bytes|KiB|MiB|GiB|TiB)"


def is_out_of_memory(exc: BaseException) -> bool:
    """CUDA and MPS raise torch.OutOfMemoryError; the CPU allocator raises a RuntimeError (or Python's
    MemoryError) that says it could not allocate. oneDNN (the CPU's convolutions) says "could not create a
    primitive" when its own workspace cannot be allocated: out of memory too where the process has a memory
    limit (`ulimit -v`, a cgroup), where that is what it means (seen here under `ulimit -v` at a batch the limit
    barely held)."""
    import torch

    if isinstance(exc, (torch.OutOfMemoryError, MemoryError)):
        return True
    if not isinstance(exc, RuntimeError):
        return False
    text = str(exc)
    if "can't allocate memory" in text or "out of memory" in text:
        return True
    if "could not create a primitive" in text:
        from ..device.host_memory import process_limit

        return process_limit() is not None
    return False


def _size(match: re.Match[str] | None) -> int | None:
    if match is None:
        return None
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def requested_bytes(message: str) -> int | None:
    """What the failing allocation asked for: CUDA's 'Tried to allocate 2.00 GiB', or the CPU
    allocator's 'you tried to allocate 123 bytes'. None when the message does not say."""
    cpu = re.search(r"you tried to allocate (\d+) bytes", message)
    if cpu:
        return int(cpu.group(1))
    return _size(re.search(r"Tried to allocate " + _SIZE, message))


def reserved_unallocated_bytes(message: str) -> int | None:
    """CUDA's '..., and 1.25 GiB is reserved by PyTorch but unallocated.': the cache at the moment of
    the failure. Reading it afterwards would count the failed step's freed tensors too."""
    return _size(re.search(_SIZE + r" is reserved by PyTorch but unallocated", message))


def where_in_training(step: int) -> str:
    """Where a training step's batch did not fit: 'at step 3' (`step` is 1-based)."""
    return Message("at step {step}", step=step)


def where_in_validation(epoch: int) -> str:
    """Where a validation batch did not fit: 'during validation after epoch 2'."""
    return Message("during validation after epoch {epoch}", epoch=epoch)


def describe(where: str, batch_size: int, requested: int | None, free: int, reserved_unallocated: int) -> str:
    """'out of memory at step 3 with batch size 512: asked for 1.50 GiB, 200 MB free, ...' for people;
    `where` from `where_in_training` or `where_in_validation`. CUDA's and MPS's wording: a caching allocator's."""
    from ..base.text import format_bytes

    if requested:
        return Message(
            "out of memory {where} with batch size {batch_size}: asked for {requested}, {free} free, "
            "{unallocated} reserved but unallocated",
            where=where,
            batch_size=batch_size,
            requested=format_bytes(requested),
            free=format_bytes(free),
            unallocated=format_bytes(reserved_unallocated),
        )
    return Message(
        "out of memory {where} with batch size {batch_size}, {free} free, {unallocated} reserved but unallocated",
        where=where,
        batch_size=batch_size,
        free=format_bytes(free),
        unallocated=format_bytes(reserved_unallocated),
    )


def limit_text(limit: ProcessLimit) -> str:
    """What a process limit is and counts: 'the process is limited to 5.00 GB of address space by ulimit -v
    (RLIMIT_AS), which counts mapped libraries too, not only resident memory'."""
    from ..base.text import format_bytes

    size = format_bytes(limit.limit_bytes)
    if limit.kind == "RLIMIT_AS":
        return Message(
            "the process is limited to {limit} of address space by ulimit -v (RLIMIT_AS), which counts "
            "mapped libraries too, not only resident memory",
            limit=size,
        )
    if limit.kind == "RLIMIT_DATA":
        return Message("the process is limited to {limit} of data by ulimit -d (RLIMIT_DATA)", limit=size)
    return Message(
        "the process's control group is limited to {limit} (cgroup memory.max, shared by the group's processes)",
        limit=size,
    )


def describe_host(where: str, batch_size: int, requested: int | None, free: int, limit: ProcessLimit | None) -> str:
    """The CPU's 'out of memory at step 3 with batch size 512: asked for 671 MB, more than the process's limit
    had left at that moment; the process is limited to ..., 1.29 GB of it left once the failed step's memory was
    given back': no allocator cache to speak of, the limit that ran out when there is one, and what is free
    now (read after the release, at each failure: the failed step's tensors are gone by then)."""
    from ..base.text import format_bytes

    asked = (
        Message(
            "out of memory {where} with batch size {batch_size}: asked for {requested}",
            where=where,
            batch_size=batch_size,
            requested=format_bytes(requested),
        )
        if requested
        else Message("out of memory {where} with batch size {batch_size}", where=where, batch_size=batch_size)
    )
    if requested and limit is not None and limit.kind != "cgroup":  # an rlimit refuses exactly what does not fit
        asked = Message("{asked}, more than the process's limit had left at that moment", asked=asked)
    if limit is None:
        return Message(
            "{asked}; {free} of system memory available once the failed step's memory was given back",
            asked=asked,
            free=format_bytes(free),
        )
    return Message(
        "{asked}; {limit}, {free} of it left once the failed step's memory was given back",
        asked=asked,
        limit=limit_text(limit),
        free=format_bytes(free),
    )


def event(
    message: str,
    where: str,
    step: int,
    batch_size: int,
    shrink: bool,
    at_failure: MemorySample,
    free_bytes: int,
    phase: str,
    limit: ProcessLimit | None = None,
    autopsy: OomAutopsy | None = None,
) -> OutOfMemory:
    """The OutOfMemory event for an error `message`: what was asked for, what the allocator held unused at
    the failure (its own figure when the message gives one, else reserved - allocated from `at_failure`),
    what is free after recovery, and what happens next (stop, or half the batch when `shrink`). A device
    without an allocator (the CPU) is worded with its process `limit` instead. `autopsy`: what held the memory
    by module and the batch that fits (gpu_train_monitor.memory.oom_autopsy)."""
    from ..events.events import OutOfMemory

    unallocated = reserved_unallocated_bytes(message)
    if unallocated is None:
        unallocated = max(at_failure.reserved_bytes - at_failure.allocated_bytes, 0)
    requested = requested_bytes(message)
    new_batch = max(batch_size // 2, 1) if shrink else None
    text = (
        describe(where, batch_size, requested, free_bytes, unallocated)
        if at_failure.has_allocator
        else describe_host(where, batch_size, requested, free_bytes, limit)
    )
    if new_batch is not None:
        text = Message("{problem}; continuing with batch size {batch_size}", problem=text, batch_size=new_batch)
    fields = autopsy.fields() if autopsy is not None else {}
    action = "shrink" if shrink else "stop"
    return OutOfMemory(step, batch_size, requested, free_bytes, unallocated, action, new_batch, text, phase, **fields)


def stop_hint(on_oom: str, batch_size: int, max_retries: int) -> str:
    """What to try after a run stopped for lack of memory."""
    if on_oom == "stop":
        return Message("try a smaller batch size or --on-oom shrink")
    if batch_size <= 1:
        return Message("batch size 1 does not fit")
    return Message("gave up after {retries} halvings", retries=max_retries)


def reset_scaler_step(scaler: torch.amp.GradScaler) -> None:
    """Forget a failed step's per-optimizer state in the gradient scaler.

    When a step fails between `unscale_` and `update` (inside `optimizer.step()`, say), GradScaler keeps
    that optimizer marked UNSCALED; the next step then skips `unscale_` and applies gradients that are
    still multiplied by the loss scale (a loss of 2.1 became 237,944 that way). `update()` is what
    normally resets this state, but it cannot run for a step that never recorded its inf checks.
    """
    if not scaler.is_enabled():
        return
    from torch.amp.grad_scaler import _refresh_per_optimizer_state

    scaler._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)  # what update() does


def drop_partial_state(optimizer: torch.optim.Optimizer) -> int:
    """Forget optimizer state that a failed first step left half made; returns how many entries.

    Adam and AdamW create `step`, `exp_avg` and `exp_avg_sq` for a parameter one after another at its
    first step. An allocation failure between them leaves an entry that the next step takes as made
    (it only checks that the entry is not empty) and then fails on with KeyError. Such a parameter
    had no update yet, so dropping its entry loses nothing.
    """
    from torch.optim import Adam, AdamW

    keys = [set(state) for state in optimizer.state.values() if state]
    if not keys:
        return 0
    complete = set().union(*keys)
    if isinstance(optimizer, (Adam, AdamW)):
        complete |= {"step", "exp_avg", "exp_avg_sq"}
        if any(group.get("amsgrad") for group in optimizer.param_groups):
            complete.add("max_exp_avg_sq")
    partial = [param for param, state in optimizer.state.items() if state and not complete <= set(state)]
    for param in partial:
        del optimizer.state[param]
    return len(partial)


_collect_garbage: Callable[[], object] = gc.collect


def collect_garbage_with(collect: Callable[[], object]) -> None:
    """Who collects unreachable objects when a failed step is released: `gc.collect` in the calling thread by
    default. A process whose objects must be destroyed on one thread of its own (a Qt window's: PySide6 deadlocks
    destroying a widget off the GUI thread) installs a collector that runs there."""
    global _collect_garbage
    _collect_garbage = collect


def collect_garbage() -> None:
    """Collect unreachable objects (tensors a failed step's frames held in cycles) with the installed collector."""
    _collect_garbage()


def release(
    device: torch.device, optimizer: torch.optim.Optimizer | None = None, scaler: torch.amp.GradScaler | None = None
) -> None:
    """Give back what a failed step held, in order: gradients, optimizer state a failed first step left
    half made, the scaler's step state, unreachable
    tensors (the exception's frames, once the caller has left the except block), the allocator's cache."""
    from .probe import clear_cache

    if optimizer is not None:
        optimizer.zero_grad(set_to_none=True)
        drop_partial_state(optimizer)
    if scaler is not None:
        reset_scaler_step(scaler)
    collect_garbage()
    clear_cache(device)
