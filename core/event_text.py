"""The sentences people read about a run, written once for the CLI's progress bar and the window's log.

Pure functions of core events (no Qt, no torch): both front ends call them, so a run reads the same
wherever it is watched, and a new event field is worded in one place.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from typing import Any

from core.events import (CacheCleared, CheckpointSaved, EpochEnded, LogMessage, OutOfMemory, RunFinished, RunStarted,
                         SnapshotSaved, StepsReported)
from core.summary import RunSummary
from core.units import format_bytes

MEMORY_VIZ = "https://pytorch.org/memory_viz"


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" + ("" if count == 1 else "s")


def _number(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def epoch_of(epoch: int, epochs: int | None) -> str:
    """'epoch 3/10', or 'epoch 3' when the run takes as many epochs as its max_steps needs."""
    return f"epoch {epoch}/{epochs}" if epochs else f"epoch {epoch}"


def run_requested(config: Any) -> str:
    """What the window logs when Start is clicked, before the session has loaded anything."""
    return f"starting: {config.model} on {config.device}, {config.dataset}, batch {config.batch_size}"


def run_started(event: RunStarted) -> str:
    """'training resnet18 on cuda:0 (NVIDIA H100): ...': the model, data, placement and the plan."""
    cfg: Mapping[str, Any] = event.config
    epochs = "as many epochs as that takes" if event.epochs is None else _plural(event.epochs, "epoch")
    return (f"training {cfg['model']} on {event.device} ({event.device_name}): {event.parameters:,} parameters, "
            f"{cfg['dataset']} ({event.train_samples:,} train / {event.val_samples:,} val images, "
            f"{format_bytes(event.dataset_bytes)}), {event.placement} placement, batch {cfg['batch_size']}, "
            f"{_plural(event.total_steps, 'step')} over {epochs}"
            + (f" (resumed at step {event.start_step:,})" if event.start_step else ""))


def steps_postfix(event: StepsReported, epochs: int | None) -> str:
    """The live part of the progress bar: epoch, mean loss of the report, speed, memory in use."""
    finite = [x for x in event.losses if math.isfinite(x)]
    loss = sum(finite) / len(finite) if finite else float("nan")
    mem = event.memory
    used = mem.allocated_bytes if mem.has_allocator else mem.process_rss_bytes
    return (f"{epoch_of(event.epoch, epochs)} loss {loss:.4f} {event.samples_per_s:,.0f} img/s "
            f"mem {format_bytes(used)}")


def epoch_ended(event: EpochEnded) -> str:
    return (f"epoch {event.epoch}: train loss {_number(event.train_loss, '.4f')}, "
            f"val loss {_number(event.val_loss, '.4f')}, val accuracy {_number(event.val_accuracy, '.2%')}")


def cache_cleared(event: CacheCleared) -> str:
    when = "at rest" if event.step is None else f"at step {event.step}"
    return (f"cache cleared {when}: {format_bytes(event.freed_bytes)} freed, "
            f"reserved now {format_bytes(event.memory.reserved_bytes)}")


def cache_cleared_mark(event: CacheCleared) -> str:
    """The short label of the cache clear on the memory plot."""
    return f"cleared {format_bytes(event.freed_bytes)}"


def snapshot_saved(event: SnapshotSaved) -> str:
    return (f"memory snapshot saved to {event.path} ({format_bytes(event.size_bytes)}) at step {event.step}: "
            f"open it at {MEMORY_VIZ}")


def checkpoint_saved(event: CheckpointSaved) -> str:
    """'checkpoint saved at step 390 (end of epoch 1): PATH (89.4 MB)'."""
    why = {"epoch": f"end of epoch {event.epoch}", "every": "periodic", "request": "requested",
           "stop": "the run stopped", "end": "the run ended mid-epoch"}.get(event.reason, event.reason)
    return f"checkpoint saved at step {event.step} ({why}): {event.path} ({format_bytes(event.size_bytes)})"


def resume_hint(path: str) -> str:
    """How to continue from a checkpoint on the command line."""
    return f"to continue: gpu-train-monitor run --resume {shlex.quote(path)}"


def out_of_memory_headline(event: OutOfMemory) -> str:
    """'Out of memory during validation' or '... during training': where the batch did not fit."""
    return f"Out of memory during {'validation' if event.phase == 'validation' else 'training'}"


def out_of_memory(event: OutOfMemory) -> str:
    """The session's own message (it names the step, batch and bytes), with the phase when it is validation."""
    if event.phase == "validation" and "validation" not in event.message:
        return f"{event.message} (during validation)"
    return event.message


def log_message(event: LogMessage) -> str:
    """A session's log line as a plain-text stream shows it (the window shows the level its own way)."""
    return event.text if event.level == "info" else f"{event.level}: {event.text}"


def batch_size_text(summary: RunSummary) -> str:
    """'64', or '64 (requested 256; halved 2x after out of memory, 32 images left out)' after shrinks."""
    changes = summary.batch_size_changes
    if not changes:
        return str(summary.batch_size)
    skipped = f", {summary.skipped_samples} images left out" if summary.skipped_samples else ""
    return (f"{summary.batch_size} (requested {changes[0]['from']}; halved {len(changes)}x after out of memory"
            f"{skipped})")


def run_finished(event: RunFinished) -> str:
    """How the run ended: its totals when it completed, else where it stopped and why."""
    summary = event.summary
    if event.status == "completed":
        rate = "n/a" if summary.samples_per_s is None else f"{summary.samples_per_s:,.0f} images/s"
        return (f"finished: {summary.steps} steps in {summary.wall_s:.1f} s, {rate}, "
                f"peak {format_bytes(summary.peak_allocated_bytes)}"
                + (f", batch size {batch_size_text(summary)}" if summary.batch_size_changes else ""))
    if event.status == "stopped":
        return f"stopped at step {event.step}"
    return f"{event.status}: {event.message}"
