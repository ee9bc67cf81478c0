"""The sentences people read about a run, written once for the CLI's progress bar and the window's log.

Pure functions of core events (no Qt, no torch): both front ends call them, so a run reads the same
wherever it is watched, and a new event field is worded in one place.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from ..base.text import Message, format_bytes
from ..config.sequences import IMAGES, Throughput, is_text_dataset
from .events import (
    CacheCleared,
    CheckpointSaved,
    EpochEnded,
    LogMessage,
    OutOfMemory,
    RunFinished,
    RunStarted,
    SnapshotSaved,
    StepsReported,
)
from .module_bytes import ModuleBytes
from .outcome import status_word
from .summary import RunSummary

MEMORY_VIZ = "https://pytorch.org/memory_viz"


def _number(value: float | None, spec: str) -> str:
    return Message("n/a") if value is None else format(value, spec)


def epoch_of(epoch: int, epochs: int | None) -> str:
    """'epoch 3/10', or 'epoch 3' when the run takes as many epochs as its max_steps needs (the CLI's bar)."""
    return f"epoch {epoch}/{epochs}" if epochs else f"epoch {epoch}"


def run_requested(config: Any) -> str:
    """What the window logs when Start is clicked, before the session has loaded anything."""
    return Message(
        "starting: {model} on {device}, {dataset}, batch {batch_size}",
        model=config.model,
        device=config.device,
        dataset=config.dataset,
        batch_size=config.batch_size,
    )


def _plan(total_steps: int, epochs: int | None) -> str:
    """'1,950 steps over 10 epochs': the run's length, one template per plural case."""
    steps = Message("1 step") if total_steps == 1 else Message("{steps:,} steps", steps=total_steps)
    if epochs is None:
        return Message("{steps} over as many epochs as that takes", steps=steps)
    if epochs == 1:
        return Message("{steps} over 1 epoch", steps=steps)
    return Message("{steps} over {epochs:,} epochs", steps=steps, epochs=epochs)


WATCHED_SOURCES = {  # a watched run's dataset column: who runs its loop
    "api": Message("its own loop (the watch API)"),
    "script": Message("an unchanged script (watch --)"),
    "lightning": Message("Lightning's Trainer"),
    "transformers": Message("the transformers Trainer"),
}


def watched_run_started(event: RunStarted) -> str:
    """'watching Net on cuda:0 (NVIDIA H100): 1,200 parameters, its own loop (the watch API), 500 steps': a
    user's training, which has no dataset, placement or epochs of ours, and often no known length."""
    source = str(event.config.get("dataset", ""))
    if event.total_steps:
        plan = Message("1 step") if event.total_steps == 1 else Message("{steps:,} steps", steps=event.total_steps)
    else:
        plan = Message("its number of steps not known in advance")
    return Message(
        "watching {model} on {device} ({device_name}): {parameters:,} parameters, {source}, {plan}",
        model=event.config.get("model", ""),
        device=event.device,
        device_name=event.device_name,
        parameters=event.parameters,
        source=WATCHED_SOURCES.get(source, source),
        plan=plan,
    )


def run_started(event: RunStarted) -> str:
    """'training resnet18 on cuda:0 (NVIDIA H100): ...': the model, data, placement and the plan."""
    if event.steps_per_epoch == 0:  # a watched run (gpu_train_monitor.watch): none of our data or epochs to name
        return watched_run_started(event)
    cfg: Mapping[str, Any] = event.config
    values = dict(
        model=cfg["model"],
        device=event.device,
        device_name=event.device_name,
        parameters=event.parameters,
        dataset=cfg["dataset"],
        train=event.train_samples,
        val=event.val_samples,
        size=format_bytes(event.dataset_bytes),
        placement=event.placement,
        batch_size=cfg["batch_size"],
        plan=_plan(event.total_steps, event.epochs),
    )
    if is_text_dataset(str(cfg["dataset"])):
        text = Message(
            "training {model} on {device} ({device_name}): {parameters:,} parameters, {dataset} "
            "({train:,} train / {val:,} val sequences of {seq_len:,} tokens, {size}), {placement} placement, "
            "batch {batch_size}, {plan}",
            seq_len=cfg.get("seq_len"),
            **values,
        )
    else:
        text = Message(
            "training {model} on {device} ({device_name}): {parameters:,} parameters, {dataset} "
            "({train:,} train / {val:,} val images, {size}), {placement} placement, batch {batch_size}, "
            "{plan}",
            **values,
        )
    if event.start_step:
        return Message("{started} (resumed at step {step:,})", started=text, step=event.start_step)
    return text


def steps_postfix(event: StepsReported, epochs: int | None, unit: Throughput = IMAGES) -> str:
    """The live part of the progress bar (the CLI's): epoch, mean loss of the report, speed (in the run's `unit`:
    img/s, or tok/s for a text run), memory in use."""
    finite = [x for x in event.losses if math.isfinite(x)]
    loss = sum(finite) / len(finite) if finite else float("nan")
    mem = event.memory
    used = mem.allocated_bytes if mem.has_allocator else mem.process_rss_bytes
    rate = unit.of(event.samples_per_s)
    return f"{epoch_of(event.epoch, epochs)} loss {loss:.4f} {rate:,.0f} {unit.short} mem {format_bytes(used)}"


def rate_text(summary: RunSummary) -> str:
    """'1,234 images/s', '45,678 tokens/s' (a text run's), or n/a: a summary's median throughput in its unit."""
    unit = summary.throughput
    rate = unit.of(summary.samples_per_s)
    if rate is None:
        return Message("n/a")
    if unit.tokens:
        return Message("{rate:,.0f} tokens/s", rate=rate)
    if unit.unit == "samples/s":
        return Message("{rate:,.0f} samples/s", rate=rate)
    return Message("{rate:,.0f} images/s", rate=rate)


def epoch_ended(event: EpochEnded) -> str:
    return Message(
        "epoch {epoch}: train loss {train_loss}, val loss {val_loss}, val accuracy {val_accuracy}",
        epoch=event.epoch,
        train_loss=_number(event.train_loss, ".4f"),
        val_loss=_number(event.val_loss, ".4f"),
        val_accuracy=_number(event.val_accuracy, ".2%"),
    )


def cache_cleared(event: CacheCleared) -> str:
    freed, reserved = format_bytes(event.freed_bytes), format_bytes(event.memory.reserved_bytes)
    if event.step is None:
        return Message("cache cleared at rest: {freed} freed, reserved now {reserved}", freed=freed, reserved=reserved)
    return Message(
        "cache cleared at step {step}: {freed} freed, reserved now {reserved}",
        step=event.step,
        freed=freed,
        reserved=reserved,
    )


def cache_cleared_mark(event: CacheCleared) -> str:
    """The short label of the cache clear on the memory plot."""
    return Message("cleared {freed}", freed=format_bytes(event.freed_bytes))


def snapshot_saved(event: SnapshotSaved) -> str:
    return Message(
        "memory snapshot saved to {path} ({size}) at step {step}: open it at {url}",
        path=event.path,
        size=format_bytes(event.size_bytes),
        step=event.step,
        url=MEMORY_VIZ,
    )


def _checkpoint_reason(event: CheckpointSaved) -> str:
    if event.reason == "epoch":
        return Message("end of epoch {epoch}", epoch=event.epoch)
    reasons = {
        "every": Message("periodic"),
        "request": Message("requested"),
        "stop": Message("the run stopped"),
        "end": Message("the run ended mid-epoch"),
    }
    return reasons.get(event.reason, event.reason)


def checkpoint_saved(event: CheckpointSaved) -> str:
    """'checkpoint saved at step 390 (end of epoch 1): PATH (89.4 MB)'."""
    return Message(
        "checkpoint saved at step {step} ({why}): {path} ({size})",
        step=event.step,
        why=_checkpoint_reason(event),
        path=event.path,
        size=format_bytes(event.size_bytes),
    )


def resume_hint(path: str) -> str:
    """How to continue from a checkpoint on the command line (the CLI's)."""
    return f"to continue: gpu-train-monitor run --resume {shlex.quote(path)}"


def out_of_memory_headline(event: OutOfMemory) -> str:
    """'Out of memory during validation' or '... during training': where the batch did not fit."""
    if event.phase == "validation":
        return Message("Out of memory during validation")
    return Message("Out of memory during training")


def out_of_memory(event: OutOfMemory) -> str:
    """The session's own message (it names the step, batch and bytes), with the phase when it is validation."""
    if event.phase == "validation" and "validation" not in event.message:
        return Message("{problem} (during validation)", problem=event.message)
    return event.message


def share_text(part: int, whole: int) -> str:
    """`part` of `whole` in whole percent, halves rounded up: '38%'; '<1%' for a part that rounds to none; '?'
    without a whole. The CLI, the log and the banner alike."""
    if whole <= 0:
        return "?"
    percent = math.floor(100 * part / whole + 0.5)
    return "<1%" if percent == 0 and part > 0 else f"{percent}%"


def holder_share(row: ModuleBytes, whole: int) -> str:
    """'layer4 1.20 GB (38%)': a module, its bytes and its share of the step split by module."""
    return f"{row.name} {format_bytes(row.total_bytes)} ({share_text(row.total_bytes, whole)})"


def holders_source(source: str, step: int) -> str:
    """Where the split by module came from: 'measured at step 12' or 'predicted for batch 256'."""
    if source == "measured":
        return Message("measured at step {step}", step=step)
    return Message("predicted for batch {batch}", batch=step)


def fits_text(fits_batch: int) -> str:
    """'batch 48 is predicted to fit', or that not even batch 1 is."""
    if fits_batch <= 0:
        return Message("not even batch 1 is predicted to fit")
    return Message("batch {batch} is predicted to fit", batch=fits_batch)


def oom_autopsy(event: OutOfMemory) -> list[str]:
    """The lines after an out of memory's own: the modules that held the most, where that split came from, and the
    batch predicted to fit; none for a run recorded before (or a step neither split nor predicted)."""
    return autopsy_lines(
        event.holders, event.holders_total_bytes, event.holders_source, event.holders_step, event.fits_batch
    )


def autopsy_lines(
    holders: Sequence[ModuleBytes], total_bytes: int, source: str, step: int, fits_batch: int | None
) -> list[str]:
    """`oom_autopsy`'s lines from the event's fields (a stored event's too)."""
    lines = []
    if holders:
        lines.append(
            Message(
                "largest holders by module ({source}): {holders}",
                source=holders_source(source, step),
                holders=", ".join(holder_share(row, total_bytes) for row in holders),
            )
        )
    if fits_batch is not None:
        lines.append(fits_text(fits_batch))
    return lines


def log_message(event: LogMessage) -> str:
    """A session's log line as a plain-text stream (the CLI) shows it (the window shows the level its own way)."""
    return event.text if event.level == "info" else f"{event.level}: {event.text}"


def batch_size_text(summary: RunSummary) -> str:
    """'64', or '64 (requested 256; halved 2x after out of memory, 32 images left out)' after shrinks."""
    changes = summary.batch_size_changes
    if not changes:
        return str(summary.batch_size)
    if summary.skipped_samples:
        return Message(
            "{batch_size} (requested {requested}; halved {halvings}x after out of memory, {skipped} images left out)",
            batch_size=summary.batch_size,
            requested=changes[0]["from"],
            halvings=len(changes),
            skipped=summary.skipped_samples,
        )
    return Message(
        "{batch_size} (requested {requested}; halved {halvings}x after out of memory)",
        batch_size=summary.batch_size,
        requested=changes[0]["from"],
        halvings=len(changes),
    )


def trained_steps(summary: RunSummary) -> str:
    """'trained 40 steps (steps 21-60)' for a run resumed at step 20: what this run trained, which the time,
    images/s and peak beside it measure, and where that lies in the whole run."""
    trained = summary.steps - summary.start_step
    if trained == 1:
        return Message("trained 1 step (step {last:,})", last=summary.steps)
    return Message(
        "trained {steps:,} steps (steps {first:,}-{last:,})",
        steps=trained,
        first=summary.start_step + 1,
        last=summary.steps,
    )


def run_finished(event: RunFinished) -> str:
    """How the run ended: its totals when it completed, else where it stopped and why."""
    summary = event.summary
    if event.status == "completed":
        rate = rate_text(summary)
        values = dict(
            steps=summary.steps, wall_s=summary.wall_s, rate=rate, peak=format_bytes(summary.peak_allocated_bytes)
        )
        if summary.start_step:  # resumed: the time, rate and peak are this run's, not the steps before it
            values["steps"] = trained_steps(summary)
            if summary.batch_size_changes:
                return Message(
                    "finished: {steps} in {wall_s:.1f} s, {rate}, peak {peak}, batch size {batch_size}",
                    batch_size=batch_size_text(summary),
                    **values,
                )
            return Message("finished: {steps} in {wall_s:.1f} s, {rate}, peak {peak}", **values)
        if summary.batch_size_changes:
            return Message(
                "finished: {steps} steps in {wall_s:.1f} s, {rate}, peak {peak}, batch size {batch_size}",
                batch_size=batch_size_text(summary),
                **values,
            )
        return Message("finished: {steps} steps in {wall_s:.1f} s, {rate}, peak {peak}", **values)
    if event.status == "stopped":
        return Message("stopped at step {step}", step=event.step)
    return Message("{status}: {message}", status=status_word(event.status), message=event.message)
