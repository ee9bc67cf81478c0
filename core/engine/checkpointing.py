"""A session's checkpoints: the state a checkpoint holds and how it is set back, when the policy says to
save, the save itself, and pruning old checkpoints.

The state is what makes a resumed run train the very losses an uninterrupted one would have. Saved: the
model, optimizer and gradient-scaler states; the step, epoch and images so far; the random generators
(torch's on the CPU, the device's, the data source's) both now and at the epoch's start; and how far the
epoch got. Resuming mid-epoch sets the epoch-start generators, makes the epoch afresh (the same order and
augmentation), seeks it to the saved position, then sets the generators saved at the checkpoint.
Everything is tensors and plain values, so `torch.load(weights_only=True)` reads it.

A save that fails (a full disk, a folder that cannot be written) is a warning in the run's log, never the
end of the run. Only the policy's own checkpoints are pruned (the newest `keep` stay, per run); requested
ones stay where the user asked for them. A run never replaces a checkpoint file in its folder that it did
not write itself (another run's, saved meanwhile by one still going on elsewhere): its checkpoints move to
a folder of their own instead.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from pathlib import Path
from typing import Any

import torch

from ..base.errors import UserError
from ..base.text import Message
from ..config.run_config import RunConfig
from ..data.batches import BatchEpoch, BatchSource, Note, Position
from ..events.events import CheckpointSaved, LogMessage
from ..model.step import TrainingStep
from . import checkpoint_files
from .checkpoint_files import AUTOMATIC_REASONS, FORMAT, VERSION, CheckpointPolicy
from .loop_state import LoopState
from .recipe import RunParts

RandomStates = dict[str, Any]
_OPTIMIZER_RUNTIME = ("fused", "foreach", "capturable", "differentiable")  # how this run's optimizer steps


def random_states(device: torch.device, source: BatchSource) -> RandomStates:
    """Every random generator a run draws from, as tensors and strings (host-side reads: no device sync)."""
    if device.type == "cuda":
        device_state: torch.Tensor | None = torch.cuda.get_rng_state(device)
    elif device.type == "mps":
        device_state = torch.mps.get_rng_state()
    else:
        device_state = None
    return {"torch": torch.get_rng_state(), "device": device_state, "source": source.random_state()}


def set_random_states(states: RandomStates, device: torch.device, source: BatchSource, same_kind: bool) -> None:
    """The inverse of `random_states`. `same_kind=False` (saved on another kind of device) leaves the device's
    generators alone: their states do not fit."""
    torch.set_rng_state(states["torch"].clone())
    if same_kind and states["device"] is not None:
        if device.type == "cuda":
            torch.cuda.set_rng_state(states["device"].clone(), device)
        elif device.type == "mps":
            torch.mps.set_rng_state(states["device"].clone())
    source.set_random_state(states["source"], data=same_kind)


def capture(
    run_uid: str,
    config: RunConfig,
    device: torch.device,
    parts: RunParts,
    loop: LoopState,
    epoch_start: RandomStates | None,
    position: Position | None,
) -> dict[str, Any]:
    """The checkpoint of a run at a step boundary. `position` None: the epoch `run.epoch` has ended
    (validated); otherwise it is how far that epoch got, and `epoch_start` its generators at its start."""
    trainer, source, splits = parts.trainer, parts.source, parts.splits
    return {
        "format": FORMAT,
        "version": VERSION,
        "saved_at": time.time(),
        "torch_version": str(torch.__version__),
        "run_uid": run_uid,
        "step": loop.step,
        "epoch": loop.epoch,
        "epoch_complete": position is None,
        "samples": loop.samples,
        "config": config.to_dict(),
        "placement": source.placement,
        "device_type": device.type,
        "batch_size": source.batch_size,
        "data": {
            "dataset": splits.name,
            "classes": splits.num_classes,
            "channels": splits.channels,
            "train_images": len(splits.train),
        },
        "model": trainer.model.state_dict(),
        "optimizer": trainer.optimizer.state_dict(),
        "scaler": trainer.scaler.state_dict(),
        "rng": {"now": random_states(device, source), "epoch_start": None if position is None else epoch_start},
        "position": position,
        "progress": {
            "epoch_losses": list(loop.epoch_losses) if position is not None else [],
            "val_accuracy": loop.val_accuracy,
            "val_batch_size": loop.val_batch_size,
            "skipped_samples": loop.skipped_samples,
            "batch_changes": [list(c) for c in loop.batch_changes],
        },
    }


def restore(
    saved: dict[str, Any], path: str, parts: RunParts, loop: LoopState, device: torch.device
) -> tuple[BatchEpoch | None, RandomStates | None, list[Note]]:
    """Load `saved` into a freshly built run: (the epoch under way, sought to its position, or None when
    the saved epoch had ended; that epoch's starting generators; notes for the run's log)."""
    _check_data(saved, path, parts)
    _load_trainer(saved, path, parts.trainer)
    progress, source = saved["progress"], parts.source
    loop.step = loop.start_step = saved["step"]
    loop.epoch = saved["epoch"]
    loop.samples = loop.start_samples = loop.last_report_samples = saved["samples"]
    loop.val_accuracy = progress["val_accuracy"]
    loop.val_batch_size = progress["val_batch_size"]
    loop.skipped_samples = progress["skipped_samples"]
    loop.batch_changes = [(int(s), int(a), int(b)) for s, a, b in progress["batch_changes"]]
    source.set_batch_size(saved["batch_size"])
    same_kind = saved["device_type"] == device.type
    notes: list[Note] = []
    if not same_kind:
        notes.append(
            (
                "warning",
                Message(
                    "{path} was saved on {saved_on}: random draws on {device_type} differ, so "
                    "the data order and augmentation from here on differ from an uninterrupted "
                    "run's",
                    path=path,
                    saved_on=saved["device_type"],
                    device_type=device.type,
                ),
            )
        )
    epoch: BatchEpoch | None = None
    epoch_start = saved["rng"]["epoch_start"]
    if not saved["epoch_complete"]:
        loop.epoch_losses = [float(x) for x in progress["epoch_losses"]]
        set_random_states(epoch_start, device, source, same_kind)
        epoch = source.train_epoch()
        epoch.seek({key: int(value) for key, value in saved["position"].items()})
    set_random_states(saved["rng"]["now"], device, source, same_kind)
    return epoch, epoch_start, notes


def check_steps_left(path: str, loop: LoopState) -> None:
    """UserError when the resumed run would end where its checkpoint was saved (or before)."""
    if loop.total_steps <= loop.step:
        raise UserError(
            Message(
                "nothing to train: {path} was saved at step {step} (epoch {epoch}) and this run ends "
                "at step {total_steps}; give it a longer length (--epochs or --max-steps, counted "
                "from the run's start)",
                path=path,
                step=loop.step,
                epoch=loop.epoch,
                total_steps=loop.total_steps,
            )
        )


def _check_data(saved: dict[str, Any], path: str, parts: RunParts) -> None:
    """The same data shape as the checkpoint's: an image folder may have changed since."""
    data, splits = saved["data"], parts.splits
    now = {"dataset": splits.name, "classes": splits.num_classes, "channels": splits.channels}
    then = {key: data.get(key) for key in now}
    if now != then:
        raise UserError(
            Message(
                "{path} was trained on {saved_dataset} ({saved_classes} classes, {saved_channels} "
                "channels); this run's data is {dataset} ({classes} classes, {channels} channels): "
                "resume it with the data it was trained on",
                path=path,
                saved_dataset=then["dataset"],
                saved_classes=then["classes"],
                saved_channels=then["channels"],
                dataset=now["dataset"],
                classes=now["classes"],
                channels=now["channels"],
            )
        )


def _load_trainer(saved: dict[str, Any], path: str, trainer: TrainingStep) -> None:
    """Model, optimizer and scaler states. The optimizer keeps this run's way of stepping (fused or not:
    the device may have changed), which also decides where its step counters live."""
    try:
        trainer.model.load_state_dict(saved["model"])
        state = dict(saved["optimizer"])
        state["param_groups"] = [
            {**group, **{key: now[key] for key in _OPTIMIZER_RUNTIME if key in now}}
            for group, now in zip(state["param_groups"], trainer.optimizer.param_groups)
        ]
        trainer.optimizer.load_state_dict(state)
    except (RuntimeError, ValueError, KeyError, TypeError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise UserError(
            Message("{path} does not fit the model and optimizer built for this run ({error})", path=path, error=first)
        ) from None
    if saved["scaler"] and trainer.scaler.is_enabled():
        trainer.scaler.load_state_dict(saved["scaler"])


class Checkpointer:
    """Saves one run's checkpoints as its policy and requests say; the session calls it at step boundaries."""

    def __init__(self, policy: CheckpointPolicy, run_uid: str) -> None:
        self.policy = policy
        self.run_uid = run_uid
        self.epoch_start: RandomStates | None = None  # the generators when the current epoch began
        self.saved_step = 0  # the last step a checkpoint holds (a resumed run: the one it started from)
        self.folder = policy.folder(run_uid)  # where the run's own checkpoints go
        self._automatic: list[Path] = []  # this run's automatic checkpoints, oldest first
        self._written: set[Path] = set()  # every file this run saved in its folder

    def epoch_started(self, device: torch.device, source: BatchSource) -> None:
        self.epoch_start = random_states(device, source)

    def restore(
        self, saved: dict, path: str, parts: RunParts, loop: LoopState, device: torch.device
    ) -> tuple[BatchEpoch | None, list[Note]]:
        """Load the checkpoint `saved` (read from `path`) into a freshly built run: (the epoch it was saved
        in, sought to its position, or None when that epoch had ended; notes for the run's log)."""
        epoch, self.epoch_start, notes = restore(saved, path, parts, loop, device)
        self.saved_step = loop.step
        if epoch is None:
            resumed = Message(
                "resumed from {path}: step {step}, at the end of epoch {epoch}",
                path=path,
                step=loop.step,
                epoch=loop.epoch,
            )
        else:
            resumed = Message(
                "resumed from {path}: step {step}, at epoch {epoch}", path=path, step=loop.step, epoch=loop.epoch
            )
        return epoch, [("info", resumed), *notes]

    def every_due(self, step: int) -> bool:
        every = self.policy.every_steps
        return every > 0 and step % every == 0 and step != self.saved_step

    def stop_due(self, step: int) -> bool:
        """A stop (or max_steps) mid-epoch keeps what was trained since the last checkpoint."""
        return self.policy.epoch_end and step != self.saved_step

    def save(
        self,
        reason: str,
        path: str | None,
        config: RunConfig,
        device: torch.device,
        parts: RunParts,
        loop: LoopState,
        epoch: BatchEpoch | None,
    ) -> CheckpointSaved | LogMessage:
        """Save the run at a step boundary (`epoch` None: the epoch has ended and been validated) to `path`,
        or to the run's folder; the event that tells the run's observers how that went."""
        target = Path(path).expanduser() if path else self._own_path(loop.step)
        position = None if epoch is None else epoch.position()
        payload = capture(self.run_uid, config, device, parts, loop, self.epoch_start, position)
        try:
            size = checkpoint_files.save(target, payload)
        except (OSError, RuntimeError) as exc:
            why = getattr(exc, "strerror", None) or (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            return LogMessage(
                "warning",
                Message(
                    "checkpoint not saved at step {step}: cannot write {path} ({why}); training goes on",
                    step=loop.step,
                    path=str(target),
                    why=why,
                ),
            )
        self.saved_step = loop.step
        if not path:
            self._written.add(target)
        self._prune(target, reason)
        return CheckpointSaved(loop.step, loop.epoch, str(target), size, reason)

    def _own_path(self, step: int) -> Path:
        """The run's file for `step`; when a file this run did not write is there, one in a new folder."""
        target = checkpoint_files.step_path(self.folder, step)
        if target not in self._written and os.path.lexists(target):
            self.folder = self.policy.folder(f"{self.run_uid}-{secrets.token_hex(4)}")
            target = checkpoint_files.step_path(self.folder, step)
        return target

    def _prune(self, target: Path, reason: str) -> None:
        if target in self._automatic:  # saved again (a request at the same step): the newest version counts
            self._automatic.remove(target)
        if reason not in AUTOMATIC_REASONS:
            return
        self._automatic.append(target)
        while self.policy.keep and len(self._automatic) > self.policy.keep:
            with contextlib.suppress(OSError):
                self._automatic.pop(0).unlink()
