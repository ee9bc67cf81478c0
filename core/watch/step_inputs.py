"""What a watched model's forward received at its first training step, kept as shapes: what its step is predicted
on (core.watch.step_prediction).

A forward under gradients is recorded once, as its tensors' shapes, strides, dtypes and devices (never their
values: nothing is kept alive) with any other argument as it is, and whether autocast was on and in which dtype.
The `watch()` API knows its model from the start: a forward pre-hook on it. An unchanged script's model is found
only at its first optimizer step, after its forward: until then a global forward hook records every module's first
forward (one dictionary look-up per call afterwards) and is removed at that step. Nothing here may fail the
forward: a failure records nothing.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn.modules.module import register_module_forward_hook
from torch.utils._pytree import TreeSpec, tree_flatten, tree_unflatten

from .placement import unwrapped


@dataclass(frozen=True)
class TensorSpec:
    """A tensor's layout without its values."""

    shape: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: torch.dtype
    device: torch.device
    requires_grad: bool

    @classmethod
    def of(cls, tensor: torch.Tensor) -> TensorSpec:
        return cls(tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype, tensor.device, tensor.requires_grad)

    def make(self, device: torch.device) -> torch.Tensor:
        """An uninitialised tensor of this layout on `device` (a fake one under a FakeTensorMode)."""
        tensor = torch.empty_strided(self.shape, self.stride, dtype=self.dtype, device=device)
        return tensor.requires_grad_(self.requires_grad) if tensor.is_floating_point() else tensor


@dataclass(frozen=True)
class StepInputs:
    """One forward's arguments, tensors as `TensorSpec`s; `autocast`: (device type, dtype) when it ran under
    autocast."""

    leaves: tuple[Any, ...]
    tree: TreeSpec
    autocast: tuple[str, torch.dtype] | None

    @classmethod
    def of(cls, args: tuple[Any, ...], kwargs: dict[str, Any]) -> StepInputs:
        leaves, tree = tree_flatten((tuple(args), dict(kwargs)))
        specs = tuple(TensorSpec.of(leaf) if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves)
        return cls(specs, tree, _autocast(specs))

    @property
    def tensors(self) -> list[TensorSpec]:
        return [leaf for leaf in self.leaves if isinstance(leaf, TensorSpec)]

    @property
    def samples(self) -> int:
        """The leading dimension of the first tensor with one (the batch size, usually); 0 when none has."""
        return next((spec.shape[0] for spec in self.tensors if spec.shape), 0)

    def build(self, device_of: Any) -> tuple[tuple[Any, ...], dict[str, Any], list[torch.Tensor]]:
        """(args, kwargs, the tensors among them) made anew: each tensor on `device_of(spec.device)`."""
        made: list[torch.Tensor] = []
        leaves = []
        for leaf in self.leaves:
            if isinstance(leaf, TensorSpec):
                leaf = leaf.make(device_of(leaf.device))
                made.append(leaf)
            leaves.append(leaf)
        args, kwargs = tree_unflatten(leaves, self.tree)
        return args, kwargs, made


def _autocast(leaves: tuple[Any, ...]) -> tuple[str, torch.dtype] | None:
    kinds = [leaf.device.type for leaf in leaves if isinstance(leaf, TensorSpec)] or ["cpu"]
    for kind in dict.fromkeys([kinds[0], "cuda", "cpu"]):
        try:
            if torch.is_autocast_enabled(kind):
                return kind, torch.get_autocast_dtype(kind)
        except (RuntimeError, TypeError, ValueError):  # a device type autocast does not know
            continue
    return None


class FirstInputs:
    """The inputs of each followed module's first forward under gradients: `follow(model)` for one model,
    `follow_all()` for every module until `stop()`; `of(model)` once the model is known."""

    def __init__(self) -> None:
        self._first: dict[int, tuple[weakref.ref[nn.Module], StepInputs]] = {}
        self._handle: Any = None
        self._one = False  # following one model only: its first forward is enough

    def follow(self, model: nn.Module) -> FirstInputs:
        self.stop()
        self._one = True
        self._handle = model.register_forward_pre_hook(self._record, with_kwargs=True)
        return self

    def follow_all(self) -> FirstInputs:
        self.stop()
        self._handle = register_module_forward_hook(self._record_after, with_kwargs=True)
        return self

    @property
    def following(self) -> bool:
        return self._handle is not None

    def stop(self) -> None:
        """Record no more (what was recorded stays)."""
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def forget(self) -> None:
        self.stop()
        self._first.clear()

    def of(self, model: nn.Module | None) -> StepInputs | None:
        """The first inputs of `model`, or of a wrapper around it (DDP, torch.compile's) when its own were not seen."""
        if model is None:
            return None
        found = self._first.get(id(model))
        if found is not None and found[0]() is model:
            return found[1]
        for ref, inputs in self._first.values():
            module = ref()
            if module is not None and module is not model and unwrapped(module) is model:
                return inputs
        return None

    def _record(self, module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if not torch.is_grad_enabled() or id(module) in self._first:
            return
        try:
            self._first[id(module)] = (weakref.ref(module), StepInputs.of(args, kwargs))
        except Exception:  # noqa: BLE001 - never the script's forward: its step is then not predicted
            return
        if self._one:
            self.stop()

    def _record_after(self, module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], _output: Any) -> None:
        self._record(module, args, kwargs)
