"""What the run store keeps of a watched run as it starts: its config (the model's and optimizer's class names,
where the training came from, the batch size of its first step) and its RunStarted; and the values a caller hands
the watch made into ones the store can keep (a count out of range, a config value JSON cannot hold would stop the
recording and leave the run `running`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from ..base.readonly import ReadOnlyDict
from ..base.text import Message
from ..events.events import MemorySample, RunStarted
from .placement import warn

MAX_COUNT = 2**53  # a count every reader keeps exactly (JSON's doubles, SQLite's 64-bit integers), beyond any real one


def checked_count(value: Any, what: str, warned: set[str] | None = None) -> int | None:
    """A count the caller gave (samples, total_steps) as the store can keep it, a whole number from 0 to 2**53;
    anything else is unknown (None), said once per `what` (in `warned`) in one line."""
    if value is None:
        return None
    try:
        count = int(value)
    except (TypeError, ValueError, OverflowError):  # nan, inf, a string
        count = -1
    if 0 <= count <= MAX_COUNT:
        return count
    if warned is None or what not in warned:
        if warned is not None:
            warned.add(what)
        warn(
            Message(
                "{what}={value} cannot be recorded (a whole number from 0 to 2**53 can): recorded as unknown",
                what=what,
                value=repr(value)[:40],
            )
        )
    return None


def plain(value: Any) -> Any:
    """`value` as JSON keeps it: numbers, text, true/false, null, lists and objects with text keys; anything else
    (a path, a device, an object) as its text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(item) for item in value]
    return str(value)


def watched_config(
    model: nn.Module | None,
    optimizers: Sequence[torch.optim.Optimizer],
    batch_size: int,
    device: torch.device,
    source: str,
    name: str,
    total_steps: int | None,
    extra: Mapping[str, Any],
) -> ReadOnlyDict:
    """A watched run's config: what the history's columns and the Config tab show (`source` stands in the
    dataset's column: a watched loop's data is its own), with `extra` (a script's path and arguments) after."""
    values: dict[str, Any] = {
        "model": type(model).__name__ if model is not None else "",
        "dataset": source,
        "optimizer": "+".join(type(opt).__name__ for opt in optimizers),
        "batch_size": batch_size,
        "device": str(device),
        "source": source,
        "name": str(name),
        "total_steps": total_steps,
    }
    values.update({str(key): plain(value) for key, value in extra.items()})
    return ReadOnlyDict(values)


def run_started(
    config: ReadOnlyDict, model: nn.Module | None, device_name: str, memory: MemorySample, run_uid: str
) -> RunStarted:
    """The start of a watched run: no epochs, no dataset of ours, its total steps when the loop said them."""
    parameters = sum(p.numel() for p in model.parameters()) if model is not None else 0
    return RunStarted(
        config=config,
        device=config["device"],
        device_name=device_name,
        placement="",
        steps_per_epoch=0,
        total_steps=config["total_steps"] or 0,
        train_samples=0,
        val_samples=0,
        parameters=parameters,
        dataset_bytes=0,
        memory=memory,
        epochs=None,
        run_uid=run_uid,
        name=config["name"],
    )
