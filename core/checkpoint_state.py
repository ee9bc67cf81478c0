"""A running session's state as a checkpoint holds it, and back: what makes a resumed run train the very
losses an uninterrupted one would have.

Saved: the model, optimizer and gradient-scaler states; the step, epoch and images so far; the random
generators (torch's on the CPU, the device's, the data source's) both now and at the epoch's start; and
how far the epoch got. Resuming mid-epoch sets the epoch-start generators, makes the epoch afresh (the
same order and augmentation), seeks it to the saved position, then sets the generators saved at the
checkpoint. Everything is tensors and plain values, so `torch.load(weights_only=True)` reads it.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from core.data.batches import BatchEpoch, BatchSource, Note, Position
from core.checkpoint import FORMAT, VERSION
from core.config.run_config import RunConfig
from core.base.errors import UserError
from core.base.text import Message
from core.recipe import RunParts
from core.run_state import RunState
from core.model.step import Trainer

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


def capture(run_uid: str, config: RunConfig, device: torch.device, parts: RunParts, run: RunState,
            epoch_start: RandomStates | None, position: Position | None) -> dict[str, Any]:
    """The checkpoint of a run at a step boundary. `position` None: the epoch `run.epoch` has ended
    (validated); otherwise it is how far that epoch got, and `epoch_start` its generators at its start."""
    trainer, source, splits = parts.trainer, parts.source, parts.splits
    return {
        "format": FORMAT, "version": VERSION, "saved_at": time.time(), "torch_version": str(torch.__version__),
        "run_uid": run_uid, "step": run.step, "epoch": run.epoch, "epoch_complete": position is None,
        "samples": run.samples, "config": config.to_dict(), "placement": source.placement,
        "device_type": device.type, "batch_size": source.batch_size,
        "data": {"dataset": splits.name, "classes": splits.num_classes, "channels": splits.channels,
                 "train_images": len(splits.train)},
        "model": trainer.model.state_dict(), "optimizer": trainer.optimizer.state_dict(),
        "scaler": trainer.scaler.state_dict(),
        "rng": {"now": random_states(device, source), "epoch_start": None if position is None else epoch_start},
        "position": position,
        "progress": {"epoch_losses": list(run.epoch_losses) if position is not None else [],
                     "val_accuracy": run.val_accuracy, "val_batch_size": run.val_batch_size,
                     "skipped_samples": run.skipped_samples, "batch_changes": [list(c) for c in run.batch_changes]},
    }


def restore(saved: dict[str, Any], path: str, parts: RunParts, run: RunState, device: torch.device
            ) -> tuple[BatchEpoch | None, RandomStates | None, list[Note]]:
    """Load `saved` into a freshly built run: (the epoch under way, sought to its position, or None when
    the saved epoch had ended; that epoch's starting generators; notes for the run's log)."""
    _check_data(saved, path, parts)
    _load_trainer(saved, path, parts.trainer)
    progress, source = saved["progress"], parts.source
    run.step = run.start_step = saved["step"]
    run.epoch = saved["epoch"]
    run.samples = run.start_samples = run.last_report_samples = saved["samples"]
    run.val_accuracy = progress["val_accuracy"]
    run.val_batch_size = progress["val_batch_size"]
    run.skipped_samples = progress["skipped_samples"]
    run.batch_changes = [(int(s), int(a), int(b)) for s, a, b in progress["batch_changes"]]
    source.set_batch_size(saved["batch_size"])
    same_kind = saved["device_type"] == device.type
    notes: list[Note] = []
    if not same_kind:
        notes.append(("warning", Message("{path} was saved on {saved_on}: random draws on {device_type} differ, so "
                                         "the data order and augmentation from here on differ from an uninterrupted "
                                         "run's", path=path, saved_on=saved["device_type"], device_type=device.type)))
    epoch: BatchEpoch | None = None
    epoch_start = saved["rng"]["epoch_start"]
    if not saved["epoch_complete"]:
        run.epoch_losses = [float(x) for x in progress["epoch_losses"]]
        set_random_states(epoch_start, device, source, same_kind)
        epoch = source.train_epoch()
        epoch.seek({key: int(value) for key, value in saved["position"].items()})
    set_random_states(saved["rng"]["now"], device, source, same_kind)
    return epoch, epoch_start, notes


def check_steps_left(path: str, run: RunState) -> None:
    """UserError when the resumed run would end where its checkpoint was saved (or before)."""
    if run.total_steps <= run.step:
        raise UserError(Message("nothing to train: {path} was saved at step {step} (epoch {epoch}) and this run ends "
                                "at step {total_steps}; give it a longer length (--epochs or --max-steps, counted "
                                "from the run's start)", path=path, step=run.step, epoch=run.epoch,
                                total_steps=run.total_steps))


def _check_data(saved: dict[str, Any], path: str, parts: RunParts) -> None:
    """The same data shape as the checkpoint's: an image folder may have changed since."""
    data, splits = saved["data"], parts.splits
    now = {"dataset": splits.name, "classes": splits.num_classes, "channels": splits.channels}
    then = {key: data.get(key) for key in now}
    if now != then:
        raise UserError(Message("{path} was trained on {saved_dataset} ({saved_classes} classes, {saved_channels} "
                                "channels); this run's data is {dataset} ({classes} classes, {channels} channels): "
                                "resume it with the data it was trained on", path=path,
                                saved_dataset=then["dataset"], saved_classes=then["classes"],
                                saved_channels=then["channels"], dataset=now["dataset"], classes=now["classes"],
                                channels=now["channels"]))


def _load_trainer(saved: dict[str, Any], path: str, trainer: Trainer) -> None:
    """Model, optimizer and scaler states. The optimizer keeps this run's way of stepping (fused or not:
    the device may have changed), which also decides where its step counters live."""
    try:
        trainer.model.load_state_dict(saved["model"])
        state = dict(saved["optimizer"])
        state["param_groups"] = [{**group, **{key: now[key] for key in _OPTIMIZER_RUNTIME if key in now}}
                                 for group, now in zip(state["param_groups"], trainer.optimizer.param_groups)]
        trainer.optimizer.load_state_dict(state)
    except (RuntimeError, ValueError, KeyError, TypeError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise UserError(Message("{path} does not fit the model and optimizer built for this run ({error})", path=path,
                                error=first)) from None
    if saved["scaler"] and trainer.scaler.is_enabled():
        trainer.scaler.load_state_dict(saved["scaler"])
