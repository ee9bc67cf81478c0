"""What a watched model's forward received at its first training step, kept as shapes: what its step is predicted
on (gpu_train_monitor.watch.step_prediction).

A forward under gradients is recorded once, as its tensors' shapes, strides, dtypes and devices (never their
values: nothing is kept alive) with any other argument as it is, and whether autocast was on and in which dtype.
The model is known for sure only at the first optimizer step (an unchanged script's is found then, after its
forward; a LightningModule's own forward may never be called): until then a global forward hook records every
module's first forward (one dictionary look-up per call afterwards), removed at that step. Nothing here may fail the
forward: a failure records nothing.
"""

from __future__ import annotations

import dataclasses
import weakref
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn.modules import module as _modules
from torch.nn.modules.module import register_module_forward_hook
from torch.utils._pytree import TreeSpec, tree_flatten, tree_unflatten

from .placement import unwrapped_model
from .trace_thread import tracing_here


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
    """The inputs of each module's first forward under gradients, from `follow_all()` until `stop()`; `of(model)`
    once the model is known."""

    def __init__(self) -> None:
        self._first: dict[int, tuple[weakref.ref[nn.Module], StepInputs]] = {}
        self._handle: Any = None

    def follow_all(self) -> FirstInputs:
        if self._handle is None:
            self._handle = register_module_forward_hook(self._record, with_kwargs=True)
        return self

    @property
    def following(self) -> bool:
        return self._handle is not None

    def stop(self) -> None:
        """Record no more (what was recorded stays). The handle of a hook registered `with_kwargs` leaves its id in
        torch's `_global_forward_hooks_with_kwargs` (torch 2.x removes it from the hooks alone), and any id there
        makes torch.compile warn of global hooks for the rest of the process: it is removed here too."""
        if self._handle is not None:
            self._handle.remove()
            _modules._global_forward_hooks_with_kwargs.pop(self._handle.id, None)
            self._handle = None

    def forget(self) -> None:
        self.stop()
        self._first.clear()

    def of(self, model: nn.Module | None) -> tuple[nn.Module, StepInputs] | None:
        """(the module to call, its first inputs): `model`'s own; a wrapper's around it (DDP, torch.compile's); else,
        for a model whose own forward is not called (a LightningModule's training_step calling `self.net(x)`), the
        outermost of its submodules that holds every one of its trainable parameters."""
        found = self._called(model)
        if found is None:
            return None
        module, inputs = found
        if inputs.autocast is None:  # autocast entered inside the forward (accelerate wraps `model.forward` so)
            inside = self._autocast_inside(module)
            if inside is not None:
                inputs = dataclasses.replace(inputs, autocast=inside)
        return module, inputs

    def _called(self, model: nn.Module | None) -> tuple[nn.Module, StepInputs] | None:
        if model is None:
            return None
        own = self._seen(model)
        if own is not None:
            return model, own
        for ref, inputs in self._first.values():
            module = ref()
            if module is not None and module is not model and unwrapped_model(module) is model:
                return model, inputs
        trained = {id(p) for p in model.parameters() if p.requires_grad}
        for module in model.modules():  # outermost first
            inputs = self._seen(module)
            if inputs is not None and trained <= {id(p) for p in module.parameters()}:
                return module, inputs
        return None

    def _autocast_inside(self, model: nn.Module) -> tuple[str, torch.dtype] | None:
        """The autocast the model's submodules ran under when the model's own forward did not: a forward wrapped in
        autocast (accelerate's, for a bf16 Trainer) enters it after the model's hooks look and leaves it before
        they look again, so only the modules it calls see it. None when none of them did."""
        for module in unwrapped_model(model).modules():
            inputs = self._seen(module)
            if inputs is not None and inputs.autocast is not None:
                return inputs.autocast
        return None

    def _seen(self, module: nn.Module) -> StepInputs | None:
        found = self._first.get(id(module))
        return found[1] if found is not None and found[0]() is module else None

    def _record(self, module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], _output: Any) -> None:
        if not torch.is_grad_enabled() or id(module) in self._first or tracing_here():
            return
        try:
            self._first[id(module)] = (weakref.ref(module), StepInputs.of(args, kwargs))
        except Exception:  # noqa: BLE001 - never the script's forward: its step is then not predicted
            return
