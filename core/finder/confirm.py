"""The finder's prediction-first search: the predicted largest batch, then at most 3 real trials to confirm it.

1. The prediction's answer: the largest batch whose predicted peak plus the overhead (what the trial process
   or device holds outside a traced step) stays under the limit (gpu_train_monitor.finder.predicted).
   Trials aim a guard under the limit (1/32 of what the limit leaves beside the fixed part): two runs of
   the same step peak ~1% apart, and a trial aimed exactly at the limit would fail half the time.
2. A real trial there. The prediction holds when, corrected by what the trial measured, its answer moves by
   less than 1/16: the trial's batch is the answer (one trial).
3. Otherwise the prediction is corrected and tried again: after one measured trial by the difference between
   measured and predicted (added to every prediction: safe in both directions when the error grows with the
   batch, since the correction is measured at the far end), after two by the line through the measured peaks;
   after an out-of-memory trial, by at least the difference to the capacity.
4. The answer is the largest batch a trial measured under the limit, never one only predicted. When no trial
   fits in 3, the caller searches as before (doubling, then bisection), below the smallest batch that failed.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .predicted import PredictedPeaks, fixed_bytes, largest_batch_under

MAX_TRIALS = 3
HOLDS = 1 / 16  # a corrected answer within this fraction of a fitting trial's batch: that trial is the answer
GUARD = 1 / 32  # of what the limit leaves beside the fixed part: trials aim this far under the limit


class Confirmed:
    """What the confirming trials found: the answer (0: none fit), the smallest failed batch, the line."""

    def __init__(self, answer: int, failed: int | None, fixed: int, per_sample: int, predicted_batch: int) -> None:
        self.answer = answer
        self.failed = failed
        self.fixed_bytes = fixed
        self.bytes_per_sample = per_sample
        self.predicted_batch = predicted_batch  # the prediction's own answer, before any trial


def confirm_prediction(
    peaks: PredictedPeaks,
    trial: Callable[[int, int], int | None],
    limit: int,
    capacity: int,
    start: int,
    max_batch: int,
    max_trials: int = MAX_TRIALS,
) -> Confirmed:
    """`trial(batch, predicted_bytes)` runs one real trial and answers its measured peak (None: out of memory).
    PredictionUnavailable (from the first prediction) when the step cannot be traced."""
    aim = _aim(peaks, limit, start)
    predicted_batch = largest_batch_under(peaks, aim, start, max_batch)
    batch = max(predicted_batch, 1)
    base_overhead = peaks.overhead_bytes
    measured: dict[int, int] = {}
    answer, failed, out_of_memory = 0, None, 0
    for done in range(1, max_trials + 1):
        peak = trial(batch, peaks.total(batch))
        out_of_memory += peak is None
        if peak is not None and peak <= limit:
            answer = max(answer, batch)
        else:
            failed = batch if failed is None else min(failed, batch)
        if peak is not None:
            measured[batch] = peak
        upper = (failed - 1) if failed is not None else max_batch
        if done == max_trials or answer >= upper:
            break
        following = _corrected_answer(peaks, base_overhead, measured, batch, peak, out_of_memory, aim, capacity, upper)
        if answer and following <= answer * (1 + HOLDS):
            break  # the prediction holds (or a larger batch would gain under 1/16)
        following = min(max(following, answer + 1, 1), upper)
        if following in measured or (failed is not None and following >= failed):
            break
        batch = following
    fixed, per_sample = _line(peaks, answer or batch, measured)
    return Confirmed(answer, failed, fixed, per_sample, predicted_batch)


def _aim(peaks: PredictedPeaks, limit: int, start: int) -> int:
    """The limit less a guard: a peak measured twice differs by ~1% (the allocator, the kernel's page
    accounting), so a trial aimed exactly at the limit fails as often as not, and one more trial follows."""
    fixed = fixed_bytes(peaks.at(start)) + peaks.overhead_bytes
    return limit - int(max(limit - fixed, 0) * GUARD)


def _corrected_answer(
    peaks: PredictedPeaks,
    base_overhead: int,
    measured: dict[int, int],
    batch: int,
    peak: int | None,
    out_of_memory: int,
    limit: int,
    capacity: int,
    upper: int,
) -> int:
    """The largest batch under the limit once the prediction agrees with what the trials measured."""
    if len(measured) >= 2:  # two measured peaks: the line through them, as the search before fitted it
        (b1, m1), (b2, m2) = sorted(measured.items())[-2:]
        per_sample = (m2 - m1) / (b2 - b1)
        if per_sample > 0:
            return int(math.floor(b2 + (limit - m2) / per_sample))
    if peak is None and out_of_memory >= 2:
        return batch // 2  # out of memory again: the prediction is far off, halve as a search would
    predicted = peaks.total(batch) - peaks.overhead_bytes + base_overhead
    # out of memory: the step needed more than the capacity, by an unknown amount; say an eighth more
    error = (peak if peak is not None else capacity + capacity // 8) - predicted
    peaks.overhead_bytes = base_overhead + error
    return largest_batch_under(peaks, limit, batch, upper)


def _line(peaks: PredictedPeaks, batch: int, measured: dict[int, int]) -> tuple[int, int]:
    """fixed + per_sample * batch as the (corrected) prediction draws it through the answer; through the
    measured trials where two or more were measured."""
    if len(measured) >= 2:
        (b1, m1), (b2, m2) = sorted(measured.items())[-2:]
        per_sample = max((m2 - m1) / (b2 - b1), 0.0)
        return int(round(m2 - per_sample * b2)), int(math.ceil(per_sample))
    prediction = peaks.at(batch)
    fixed = fixed_bytes(prediction) + peaks.overhead_bytes
    total = peaks.total(batch)
    if batch in measured:  # the line goes through the measured peak, with the prediction's slope
        fixed += measured[batch] - total
        total = measured[batch]
    return fixed, int(math.ceil(max(total - fixed, 0) / batch))
