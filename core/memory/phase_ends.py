"""A real step's live bytes where each phase ends (forward, backward, optimizer), counted as the measured breakdown
counts them where no allocator keeps a count (gpu_train_monitor.memory.breakdown's saved-tensors method):
parameters, gradients and optimizer state read from the objects, the batch, and what autograd saved for backward
that is still alive (less the weights and the batch it also saves). What a predicted timeline's phase ends are
checked against, without the live-bytes count the prediction itself uses.

Temporaries (outputs nobody saved, the loss) are not in this count: compare it with a prediction's points less
their temporaries.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence

import torch
from torch import nn

from ..events.module_bytes import OUTSIDE
from ..events.step_timeline import StepTimeline, TimelinePoint
from .breakdown import SavedTensorCount, grads_bytes, optimizer_bytes, params_bytes, storage_key
from .predict import StepParts, create_state, step_batch


class PhaseEnds:
    """The `marks` a step is given: at each `mark(phase)` the holders are counted (see the module doc)."""

    def __init__(self, parts: StepParts, batch: Sequence[torch.Tensor], device: torch.device) -> None:
        self.parts = parts
        self.batch = tuple(batch)
        self.device = device
        self.saved = SavedTensorCount()
        self.saved.on_pack = self._packed
        self._alive: dict[int, tuple[weakref.ref[torch.UntypedStorage], int]] = {}
        self._points: list[TimelinePoint] = []

    def _packed(self, tensor: torch.Tensor) -> None:
        storage = tensor.untyped_storage()
        if storage._cdata not in self._alive:
            self._alive[storage._cdata] = (weakref.ref(storage), storage.nbytes())

    def mark(self, phase: str) -> None:
        model = self.parts.model
        weights = [*model.parameters(), *model.buffers()]
        own = {storage_key(t) for t in [*weights, *self.batch]}
        saved = sum(n for key, (ref, n) in self._alive.items() if key not in own and ref() is not None)
        state = sum(optimizer_bytes(optimizer, self.device) for optimizer in self.parts.optimizers)
        batch = sum({storage_key(t): t.untyped_storage().nbytes() for t in self.batch}.values())
        point = TimelinePoint(
            len(self._points),
            phase,
            OUTSIDE,
            params_bytes=params_bytes(model),
            grads_bytes=grads_bytes(model),
            optimizer_bytes=state,
            batch_bytes=batch,
            activations_bytes=saved,
        )
        self._points.append(point)

    def timeline(self) -> StepTimeline:
        """The phase ends as a timeline of one point each (its `index`: the point's position; no events counted)."""
        return StepTimeline(tuple(self._points), tuple((p.phase, at) for at, p in enumerate(self._points)), 0)


def measure_phase_ends(
    build_model: Callable[[], nn.Module],
    build_step: Callable[[nn.Module], StepParts],
    images_shape: tuple[int, ...],
    num_classes: int,
    *,
    device: torch.device,
    channels_last: bool = False,
) -> StepTimeline:
    """One real step on `device` (after one update on zero gradients creates the optimizer's state, as a
    prediction's traced step), counted at each phase end; both builders run with `device` as the default."""
    with torch.device(device), torch.enable_grad():
        parts = build_step(build_model())
        batch = step_batch(images_shape, num_classes, device, channels_last)
    with torch.enable_grad():
        for optimizer in parts.optimizers:
            create_state(optimizer)
        ends = PhaseEnds(parts, batch, device)
        with ends.saved.counting():
            parts.step(*batch, ends)
    return ends.timeline()
