"""A predicted step told the way a real step's breakdown is measured, so the two are compared like with like.

A prediction holds each part at the step's peak of live tensor bytes: one moment, late in the forward pass or
early in backward, when most gradients do not exist yet. A measured breakdown reads its parts otherwise
(gpu_train_monitor.memory.breakdown, gpu_train_monitor.watch.step_memory):
- gradients, parameters and optimizer state from the objects once the step is done: every gradient exists;
- on CUDA ("allocator"), activations are the step's peak less those parts, and the total is that peak;
- on the CPU and MPS ("saved-tensors"), activations are the bytes autograd saved for backward, and the total is
  the sum of the parts (no allocator keeps a peak there);
- a watched run has no batch of its own: what the model received is within its activations.
`as_measured` gives the prediction's parts by the same rules. A prediction recorded before it counted the step's
end (no gradients at the end, nothing saved) is told as it was, at its peak.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

STEP_PARTS = ("params_bytes", "grads_bytes", "optimizer_bytes", "batch_bytes", "activations_bytes")


class PredictedStep(Protocol):
    """What a prediction and a watched run's recorded `StepPredicted` both have."""

    peak_bytes: int
    params_bytes: int
    grads_bytes: int
    optimizer_bytes: int
    batch_bytes: int
    activations_bytes: int
    overhead_bytes: int
    grads_end_bytes: int
    saved_activations_bytes: int
    saved_inputs_bytes: int


class MeasuredStep(Protocol):
    """What a measured `MemoryBreakdown` has."""

    batch_bytes: int
    method: str


@dataclass(frozen=True)
class StepParts:
    """The five parts of a step (STEP_PARTS order) and the total they are compared by."""

    params_bytes: int
    grads_bytes: int
    optimizer_bytes: int
    batch_bytes: int
    activations_bytes: int
    total_bytes: int
    total_is_peak: bool  # the step's peak (CUDA's reading, or a prediction told as it was), else its parts summed

    def part(self, key: str) -> int:
        return int(getattr(self, key))


def as_measured(predicted: PredictedStep, measured: MeasuredStep) -> StepParts:
    """`predicted`'s parts and total as `measured` was read (see the module doc)."""
    peak = predicted.peak_bytes + predicted.overhead_bytes
    if not predicted.grads_end_bytes and not predicted.saved_activations_bytes:  # recorded before these were counted
        return StepParts(
            predicted.params_bytes,
            predicted.grads_bytes,
            predicted.optimizer_bytes,
            predicted.batch_bytes,
            predicted.activations_bytes + predicted.overhead_bytes,
            peak,
            True,
        )
    params, grads, state = predicted.params_bytes, predicted.grads_end_bytes, predicted.optimizer_bytes
    has_batch = measured.batch_bytes > 0  # a watched run's breakdown counts what its model received as activations
    batch = predicted.batch_bytes if has_batch else 0
    if measured.method == "allocator":
        activations = max(peak - params - grads - state - batch, 0)
        return StepParts(params, grads, state, batch, activations, params + grads + state + batch + activations, True)
    activations = predicted.saved_activations_bytes + (0 if has_batch else predicted.saved_inputs_bytes)
    return StepParts(params, grads, state, batch, activations, params + grads + state + batch + activations, False)


def error_percent(predicted: int, measured: int) -> float:
    """How far the prediction is off the measurement, in % of the measurement (negative: predicted less)."""
    return 100.0 * (predicted - measured) / measured if measured else 0.0
