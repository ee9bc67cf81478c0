"""What an out of memory leaves to read: the modules that held the most when it happened, and the batch the
prediction says would fit.

The holders come from the latest step split by module when there is one (measured: a run splits its second
sampled step, then about one a minute; a watched run's step under way at the failure when it was being split),
else from the step as predicted (traced without memory), which exists before any step ran: an out of memory at the
first step is the common one. Which of the two is said with them.

The batch that fits is worked out as the batch-size finder's first guess is (gpu_train_monitor.finder.predicted):
parameters, gradients and optimizer state stay, the rest grows in proportion to the batch. The failure is itself a
measurement, as the finder's advice after an out of memory takes it: whatever the prediction says, the failed batch
needed more than the capacity, so what lies outside the traced step is raised until the prediction agrees; the
largest batch that then stays under the capacity less its margin is the answer, below the batch that failed.
Torch-free: plain values in, plain values out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..config.bounds import FINDER_BOUNDS
from ..events.module_bytes import ModuleBytes, largest, modules_total

HOLDERS = 5  # modules named at an out of memory
FIT_MARGIN = float(FINDER_BOUNDS["margin"].default)  # fraction of the capacity kept free, as the finder keeps it


class Predicted(Protocol):
    """What a `Prediction` and a watched run's `StepPredicted` both have."""

    peak_bytes: int
    params_bytes: int
    grads_bytes: int
    optimizer_bytes: int
    batch_size: int
    modules: tuple[ModuleBytes, ...]


@dataclass(frozen=True)
class OomAutopsy:
    """The autopsy's fields of an `OutOfMemory` event (its names), as `fields()` hands them to it."""

    holders: tuple[ModuleBytes, ...] = ()
    holders_total_bytes: int = 0
    holders_source: str = ""  # "measured", "predicted" or "" (no split by module)
    holders_step: int = 0  # the measured step, or the batch size predicted for
    fits_batch: int | None = None

    def fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def fixed_bytes(prediction: Predicted) -> int:
    """What a step holds whatever its batch: the parameters, their gradients and the optimizer's state."""
    return prediction.params_bytes + prediction.grads_bytes + prediction.optimizer_bytes


def proportional_batch(prediction: Predicted, overhead: int, limit: int) -> int | None:
    """The batch whose total reaches `limit` from one prediction, the fixed part staying and the rest growing in
    proportion to the batch; 1 when the fixed part alone reaches it; None when nothing grows with the batch."""
    fixed = fixed_bytes(prediction) + overhead
    per_sample = (prediction.peak_bytes + overhead - fixed) / max(prediction.batch_size, 1)
    if limit <= fixed:
        return 1
    if per_sample <= 0:
        return None
    return int((limit - fixed) // per_sample)


def batch_that_fits(prediction: Predicted, failed_batch: int, capacity_bytes: int, margin: float = FIT_MARGIN) -> int:
    """The largest batch below `failed_batch` predicted to fit `capacity_bytes` less `margin` (0: not even 1), the
    overhead raised so that the failed batch does not fit (see the module doc)."""
    fixed = fixed_bytes(prediction)
    per_sample = max(prediction.peak_bytes - fixed, 0) / max(prediction.batch_size, 1)
    failed_peak = fixed + per_sample * failed_batch
    overhead = max(int(capacity_bytes + 1 - failed_peak), 0)
    limit = int(capacity_bytes * (1.0 - margin))
    if limit <= fixed + overhead or per_sample <= 0:
        return 0
    fits = proportional_batch(prediction, overhead, limit)
    return max(min(fits if fits is not None else 0, failed_batch - 1), 0)


def holders_of(rows: Sequence[ModuleBytes], count: int = HOLDERS) -> tuple[ModuleBytes, ...]:
    """The `count` modules holding the most (outside modules aside), without their layers: a short record."""
    return tuple(ModuleBytes(**{**row.as_json(False), "layers": ()}) for row in largest(rows, count))


def autopsy(
    measured: Sequence[ModuleBytes],
    measured_step: int,
    predicted: Predicted | None,
    failed_batch: int,
    capacity_bytes: int,
) -> OomAutopsy:
    """The autopsy from the latest measured split (`measured`, of step `measured_step`; () when none) or else the
    prediction's, and the batch that fits from the prediction (None without one)."""
    fits = batch_that_fits(predicted, failed_batch, capacity_bytes) if predicted is not None else None
    if measured:
        return OomAutopsy(holders_of(measured), modules_total(measured), "measured", measured_step, fits)
    rows = predicted.modules if predicted is not None else ()
    if rows:
        assert predicted is not None
        return OomAutopsy(holders_of(rows), modules_total(rows), "predicted", predicted.batch_size, fits)
    return OomAutopsy(fits_batch=fits)
