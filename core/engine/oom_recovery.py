"""The training session's answer to an out-of-memory error, in training and in validation alike.

Free what the failed step held, describe it in an `OutOfMemory` event, then either stop the run or go on
with half the batch (`on_oom shrink`, at most MAX_OOM_RETRIES halvings in a run). The session emits the
event between `recover` and `continue_with`, so observers hear of the failure before the batch changes.
gpu_train_monitor.memory.oom holds what the batch-size finder shares with this (recognising the error, the release
order, the event's text).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..base.text import Message
from ..config.run_config import RunConfig
from ..data.batches import BatchEpoch, BatchSource
from ..device.host_memory import process_limit
from ..events.events import OutOfMemory
from ..memory import oom, oom_autopsy
from ..memory.oom_autopsy import OomAutopsy
from ..memory.probe import MemoryProbe
from .loop_state import LoopState, planned_steps
from .prediction import predict
from .recipe import RunParts
from .validation import evaluate

MAX_OOM_RETRIES = 8


def recover(
    message: str,
    phase: str,
    config: RunConfig,
    loop: LoopState,
    device: torch.device,
    probe: MemoryProbe,
    parts: RunParts,
) -> OutOfMemory:
    """Count the failure, give back what the failed step held, and decide: the event's `new_batch_size`
    is the batch to go on with, or None when the run stops. Called outside the `except` block
    (gpu_train_monitor.memory.oom)."""
    loop.oom_retries += 1
    at_failure = probe.sample()  # before the release: what the allocator held unused at the failure
    oom.release(device, parts.trainer.optimizer, parts.trainer.scaler)
    batch = parts.source.batch_size if phase == "train" else loop.val_batch_size
    shrink = config.on_oom == "shrink" and batch > 1 and loop.oom_retries <= MAX_OOM_RETRIES
    where = oom.where_in_training(loop.step + 1) if phase == "train" else oom.where_in_validation(loop.epoch)
    limit = process_limit() if device.type == "cpu" else None  # read now: what the release left under it
    capacity = probe.usable_capacity()
    autopsy = autopsy_of(config, loop, batch, device, capacity, predicting=not shrink) if phase == "train" else None
    return oom.event(message, where, loop.step, batch, shrink, at_failure, probe.free_bytes(), phase, limit, autopsy)


def autopsy_of(
    config: RunConfig, loop: LoopState, batch: int, device: torch.device, capacity: int, predicting: bool
) -> OomAutopsy:
    """What held the memory by module (the latest measured split, else the prediction's) and the batch predicted to
    fit. The step is predicted once per run, at the failure that stops it (`predicting`: a fraction of a second to a
    few seconds, no device memory used; one prediction extrapolates to any batch). A run that goes on with half the
    batch is not predicted for: the trace's own host memory and imports would come out of what the next batch has
    (under a process limit, seen to make a batch that fitted fail at a later step). A step that cannot be predicted
    goes without."""
    if loop.predicted is None and predicting:
        try:  # `batch` is a process's share in a data-parallel run; the prediction takes the world's and shares it
            loop.predicted = predict(config, batch * config.nproc, device=device.type)
        except Exception:  # noqa: BLE001 - untraceable, or short of memory for the trace itself: no prediction
            loop.predicted = False  # tried: not again at the next failure
    measured = loop.attributed
    rows, step = (measured.modules, measured.step) if measured is not None else ((), 0)
    return oom_autopsy.autopsy(rows, step, loop.predicted or None, batch, capacity)


def stop_message(event: OutOfMemory, on_oom: str) -> str:
    """The run's final message when `event` stops it: what failed, then what to try."""
    return Message(
        "{problem}; {hint}", problem=event.message, hint=oom.stop_hint(on_oom, event.batch_size, MAX_OOM_RETRIES)
    )


def continue_with(
    event: OutOfMemory, config: RunConfig, loop: LoopState, source: BatchSource, epoch: BatchEpoch | None
) -> None:
    """Apply the halved batch of a `shrink` event: to validation only, or to training (and validation,
    which follows it and is never larger), replanning the run's steps for the same images."""
    new_batch = event.new_batch_size
    assert new_batch is not None
    if event.phase == "validation":
        loop.val_batch_size = new_batch
    else:
        source.set_batch_size(new_batch)
        loop.val_batch_size = min(loop.val_batch_size, new_batch)  # validation follows, never larger
        loop.batch_changes.append((loop.step, event.batch_size, new_batch))
        loop.total_steps = planned_steps(config, loop, source, epoch)  # the same images, in more steps


def validate(
    parts: RunParts, device: torch.device, loop: LoopState, recover: Callable[[str], None]
) -> tuple[float | None, float | None]:
    """(accuracy, mean loss) over the validation split at the run's validation batch size. Each
    out-of-memory error's message goes to `recover`, outside the `except` block, which stops the run (it
    raises) or halves the validation batch for the next try."""
    while True:
        try:
            return evaluate(parts.trainer, parts.source.val_batches(loop.val_batch_size), device)
        except (torch.OutOfMemoryError, RuntimeError, MemoryError) as exc:
            if not oom.is_out_of_memory(exc):
                raise
            failure = str(exc)
        recover(failure)
