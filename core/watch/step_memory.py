"""What holds the memory of a watched training: the user's parameters, gradients and optimizer state, read from
the objects given, and the rest of the peak as activations and workspace, as a run of ours is broken down.

A watched loop is not ours to wrap, so the measurement spans step() calls instead of one step's phases:
- CUDA: the allocator's peak since the previous breakdown (read, then reset: host counters, no sync) minus the
  model's state is the activations and workspace of the fullest step in between.
- CPU and MPS have no peak counters: the bytes autograd saves for backward are counted (`saved_tensors_hooks`)
  from one step() to the next, once a breakdown is due (~once a second), as our CPU runs do.
Gradients are often already freed when step() is called (`zero_grad()` first); they then count as one gradient per
trainable parameter the optimizer holds, the bytes backward made during the step.
On the CPU and MPS a measured step is also split by module now and then (gpu_train_monitor.memory.measured_modules):
the module that saved each tensor is the one running then; the inputs the model received are saved by its first
layers, so they are in those layers' activations.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import torch
from torch import nn

from ..events.events import MemoryBreakdown
from ..events.module_bytes import ModuleBytes
from ..memory.breakdown import SavedTensorCount, grads_bytes, optimizer_bytes, params_bytes
from ..memory.measured_modules import AttributionSchedule, measured_rows
from ..memory.module_context import ModuleContext
from ..memory.probe import MemoryProbe


def _trainable_bytes(optimizers: Sequence[torch.optim.Optimizer]) -> int:
    seen: set[int] = set()
    total = 0
    for optimizer in optimizers:
        for group in optimizer.param_groups:
            for param in group["params"]:
                if param.requires_grad and id(param) not in seen:
                    seen.add(id(param))
                    total += param.nelement() * param.element_size()
    return total


class WatchedStepMemory:
    """Breakdowns of a watched model's memory, measured between step() calls."""

    def __init__(self, probe: MemoryProbe) -> None:
        self.probe = probe
        self.uses_allocator = probe.device.type == "cuda"
        self._saved = SavedTensorCount()
        self._hooks: contextlib.ExitStack | None = None
        self.attribution = AttributionSchedule()  # which measured steps are also split by module
        self._context: ModuleContext | None = None

    def begin(self) -> None:
        """Start measuring from this step() to the next (CPU/MPS: count what autograd saves; CUDA: restart the
        peak counter)."""
        if self.uses_allocator:
            self.probe.reset_phase_peak()
            return
        if self._hooks is None:
            self._context = ModuleContext() if self.attribution.due() else None
            self._saved = SavedTensorCount(self._context)
            self._hooks = contextlib.ExitStack()
            if self._context is not None:
                self._hooks.enter_context(self._context)
            self._hooks.enter_context(self._saved.counting())

    @property
    def measuring(self) -> bool:
        return self._hooks is not None

    def end(self) -> None:
        """Stop counting saved tensors (also when the run ends mid-measurement)."""
        if self._hooks is not None:
            hooks, self._hooks = self._hooks, None
            hooks.close()
        self._context = None

    def breakdown(
        self, step: int, model: nn.Module | None, optimizers: Sequence[torch.optim.Optimizer]
    ) -> MemoryBreakdown:
        """The breakdown at `step`: the model's state from the objects, activations from what was measured since
        `begin()` (ends the measurement)."""
        device = self.probe.device
        p = params_bytes(model) if model is not None else 0
        g = grads_bytes(model) if model is not None else 0
        freed_grads = g == 0
        if freed_grads:
            g = _trainable_bytes(optimizers)
        o = sum(optimizer_bytes(optimizer, device) for optimizer in optimizers)
        modules: tuple[ModuleBytes, ...] = ()
        if self.uses_allocator:
            peak = self.probe.reset_phase_peak()
            activations = max(peak - p - g - o, 0)
            method = "allocator"
        else:
            own = [*model.parameters(), *model.buffers()] if model is not None else []
            activations = self._saved.activations_bytes(own)
            method = "saved-tensors"
            if self._context is not None and model is not None:
                saved = self._saved.by_module(own)
                total = p + g + o + activations
                modules = measured_rows(model, optimizers, device, saved, (), total, freed_grads=freed_grads)
            self.end()
        # no phase peaks: a watched step's phases happen in the user's code, between our calls
        return MemoryBreakdown(step, p, g, o, 0, activations, 0, (), method, modules=modules)
