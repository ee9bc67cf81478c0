"""What the run store keeps of a watched run as it starts: its config (the model's and optimizer's class names,
where the training came from, the batch size of its first step) and its RunStarted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from ..base.readonly import ReadOnlyDict
from ..run.events import MemorySample, RunStarted


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
        "name": name,
        "total_steps": total_steps,
    }
    values.update(extra)
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
