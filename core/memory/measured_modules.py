"""A real step's memory by module, measured on a sampled step: what each module saved for backward
(`saved_tensors_hooks` with the module running when it was saved), and its parameters, gradients and optimizer
state read from the objects, as the step's breakdown reads them (gpu_train_monitor.memory.breakdown).

Attribution costs a forward hook per module call, so it is not done on every sampled step: the second sampled
step of a run (the first has no optimizer state yet) and then one every `ATTRIBUTION_PERIOD_S`.

The rows add up to the breakdown's total: on the CPU and MPS (saved tensors) the saved bytes are the breakdown's
activations, and what is left (a resident dataset) is `OUTSIDE`'s temporaries; on CUDA (the allocator's peak) the
activations are that peak less the rest, so what modules did not save (the step's temporaries, cuDNN and cuBLAS
workspaces) is `OUTSIDE`'s temporaries too.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

import torch
from torch import nn

from ..events.module_bytes import ModuleBytes
from .module_rows import Entry, module_rows

ATTRIBUTION_PERIOD_S = 60.0  # one attributed step a minute, after the first


class AttributionSchedule:
    """Which sampled steps are attributed: `due()` is asked once per sampled step (never on the others)."""

    def __init__(self, period_s: float | None = None) -> None:
        self.period_s = ATTRIBUTION_PERIOD_S if period_s is None else period_s
        self._samples = 0
        self._last = -float("inf")

    def due(self) -> bool:
        self._samples += 1
        now = time.monotonic()
        if self._samples < 2 or now - self._last < self.period_s:
            return False
        self._last = now
        return True


def measured_rows(
    model: nn.Module,
    optimizers: Sequence[torch.optim.Optimizer],
    device: torch.device,
    saved: Iterable[tuple[nn.Module | None, int]],
    inputs: Sequence[torch.Tensor],
    total_bytes: int,
    *,
    freed_grads: bool = False,
) -> tuple[ModuleBytes, ...]:
    """The rows of a measured step (see the module doc): `saved`, what was saved for backward by module, less the
    weights and `inputs` (`SavedTensorCount.by_module`); `inputs`, the batch as the model received it (`OUTSIDE`'s
    activations, none for a watched model); `total_bytes`, the breakdown's total, which the rows add up to;
    `freed_grads`: the gradients were freed before they could be read (a watched loop's `zero_grad()`), and are
    counted as the breakdown counts them, one per trainable parameter."""
    seen: set[tuple[int, int]] = set()
    entries: list[Entry] = []
    of_param: dict[int, nn.Module] = {}
    for module in model.modules():
        for param in module._parameters.values():
            if param is not None and id(param) not in of_param:
                of_param[id(param)] = module
                entries.append((module, "params_bytes", _new_bytes(param, seen)))
        for buffer in module._buffers.values():
            if buffer is not None:
                entries.append((module, "params_bytes", _new_bytes(buffer, seen)))
    for module in model.modules():
        for param in module._parameters.values():
            if param is None or of_param.get(id(param)) is not module:
                continue
            if param.grad is not None:
                entries.append((module, "grads_bytes", _new_bytes(param.grad, seen)))
            elif freed_grads and param.requires_grad:
                entries.append((module, "grads_bytes", param.nelement() * param.element_size()))
    state_seen: set[tuple[int, int]] = set()
    for optimizer in optimizers:
        for param, values in optimizer.state.items():
            for value in _tensors(values.values()):
                if value.device.type == device.type:
                    entries.append((of_param.get(id(param)), "optimizer_bytes", _new_bytes(value, state_seen)))
    entries += [(module, "activations_bytes", nbytes) for module, nbytes in saved]
    input_seen: set[tuple[int, int]] = set()
    entries += [(None, "activations_bytes", _new_bytes(t, input_seen)) for t in inputs]
    rest = total_bytes - sum(nbytes for _, _, nbytes in entries)
    entries.append((None, "temporaries_bytes", max(rest, 0)))
    return module_rows(model, entries)


def _new_bytes(tensor: torch.Tensor, seen: set[tuple[int, int]]) -> int:
    """The tensor's bytes the first time its (data, size) is met, then 0: tied weights counted once, as the
    breakdown counts them."""
    key = (tensor.data_ptr(), tensor.nelement())
    if key in seen:
        return 0
    seen.add(key)
    return tensor.nelement() * tensor.element_size()


def _tensors(values: Iterable[object]) -> Iterable[torch.Tensor]:
    return (value for value in values if isinstance(value, torch.Tensor))
