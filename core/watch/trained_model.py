"""Which model an optimizer trains, found from outside the script: the live optimizers and modules (one pass over
the collector's objects), an optimizer's size in parameter elements, and the module that holds its parameters.
Reads no tensor's value."""

from __future__ import annotations

import gc
from collections.abc import Iterable
from typing import Any

from torch import nn
from torch.optim import Optimizer

from .trace_thread import traced_objects


def model_of(optimizer: Optimizer, modules: Iterable[nn.Module]) -> nn.Module | None:
    """The module an optimizer trains: the outermost of those holding the most of its parameters (all of them,
    usually), so a wrapper (DDP, torch.compile) wins over the model inside it; None when none holds any."""
    wanted = {id(p) for group in optimizer.param_groups for p in group["params"]}
    if not wanted:
        return None
    covering: list[tuple[int, nn.Module]] = []
    for module in modules:
        held = len(wanted.intersection(id(p) for p in module.parameters()))
        if held:
            covering.append((held, module))
    if not covering:
        return None
    most = max(held for held, _ in covering)
    best = [module for held, module in covering if held == most]
    inner = {id(sub) for module in best for sub in module.modules() if sub is not module}
    roots = [module for module in best if id(module) not in inner] or best
    return min(roots, key=lambda module: sum(p.numel() for p in module.parameters()))


def trained_module(modules: Iterable[nn.Module]) -> nn.Module | None:
    """What a backward() trained when no optimizer did (weights updated by hand): the outermost module whose
    parameters got gradients, the largest of several; None when none did (raw tensors)."""
    trained = [module for module in modules if any(p.grad is not None for p in module.parameters())]
    inner = {id(sub) for module in trained for sub in module.modules() if sub is not module}
    roots = [module for module in trained if id(module) not in inner]
    return max(roots, key=lambda module: sum(p.numel() for p in module.parameters()), default=None)


def live_objects(*kinds: type[Any]) -> list[list[Any]]:
    """Every live object of each kind but a prediction trace's (trace_thread.traced_objects), by its real type
    (`isinstance` would ask each object's `__class__`, which proxies and deprecated module attributes answer with
    code of their own), in one pass over the collector's."""
    found: list[list[Any]] = [[] for _ in kinds]
    slots: dict[type, int] = {}  # a class -> the kind it is (-1: none), asked once per class
    for obj in gc.get_objects():
        cls = type(obj)
        slot = slots.get(cls)
        if slot is None:
            slot = slots[cls] = next((index for index, kind in enumerate(kinds) if issubclass(cls, kind)), -1)
        if slot >= 0 and obj not in traced_objects:
            found[slot].append(obj)
    return found


def parameter_count(optimizer: Optimizer) -> int:
    """The elements an optimizer updates; 0 for one still being made (on another thread: no param_groups yet)."""
    groups = getattr(optimizer, "param_groups", None) or ()
    return sum(p.numel() for group in groups for p in group.get("params", ()))
