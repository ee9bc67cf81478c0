"""The values a step capture (gpu_train_monitor.watch.step_capture) hands on and holds: a step, the callback that
gets it, a first step held while a larger optimizer is alive, and weak references to the objects a scan found."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.optim import Optimizer

StepCallback = Callable[["Optimizer | None", "torch.Tensor | None", "int | None"], None]
Step = tuple["torch.Tensor | None", int]  # a step's loss (on its device) and samples


def weak(objects: list[Any]) -> list[weakref.ref[Any]]:
    return [weakref.ref(obj) for obj in objects]


@dataclass
class HeldStep:
    """A first step made while a larger optimizer is alive: whose, how large, and what it trained on."""

    optimizer: weakref.ref[Optimizer]
    size: int
    step: Step
