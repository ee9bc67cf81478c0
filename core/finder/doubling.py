"""The search before predictions, and the finder's fallback where a step cannot be predicted: real trials
only, doubling from the first batch size, then bisection; the answer from the line fitted through the peaks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..base.errors import UserError
from ..base.text import Message

if TYPE_CHECKING:
    from .search import Trial


def search_with_trials(
    run: Callable[[int], Trial],
    trials: dict[int, Trial],
    capacity: int,
    limit: int,
    margin: float,
    start: int,
    max_batch: int,
    device: str,
) -> tuple[int, int, int]:
    """The answer, and the line fitted through the peaks: (batch size, fixed bytes, bytes per sample). `run(batch)`
    runs one real trial (recorded in `trials`); the caller builds its result from these plain values, so this
    module needs none of its types at run time."""
    # Doubling: find a fitting batch and the first one that does not fit.
    lo, hi, batch = 0, None, start
    while batch <= max_batch:
        if run(batch).fits:
            lo = batch
            batch *= 2
        else:
            hi = batch
            break
    if lo == 0:
        raise UserError(
            Message(
                "even batch size {start} needs more than {limit_gb:.2f} GB (capacity {capacity_gb:.2f} "
                "GB with a {margin:.0%} margin) on {device}",
                start=start,
                limit_gb=limit / 1e9,
                capacity_gb=capacity / 1e9,
                margin=margin,
                device=device,
            )
        )
    # Binary search between them, to within an eighth of the answer: the fit resolves the rest.
    if hi is not None:
        while hi - lo > max(1, lo // 8):
            mid = (lo + hi) // 2
            if run(mid).fits:
                lo = mid
            else:
                hi = mid
    fixed, per_sample = fit_line([t for t in trials.values() if t.peak_bytes is not None and t.batch_size <= max_batch])
    answer = lo
    if per_sample > 0:
        predicted = math.floor((limit - fixed) / per_sample)
        upper = (hi - 1) if hi is not None else max_batch
        answer = min(max(predicted, lo), upper)  # the fit may not contradict a measured trial
    return answer, fixed, per_sample


def fit_line(trials: list[Trial]) -> tuple[int, int]:
    """Least-squares peak = fixed + per_sample * batch over measured trials (per_sample >= 0)."""
    if not trials:
        return 0, 0
    if len(trials) == 1:
        return int(trials[0].peak_bytes or 0), 0
    import numpy as np

    x = np.array([t.batch_size for t in trials], dtype=float)
    y = np.array([t.peak_bytes for t in trials], dtype=float)
    slope, intercept = np.polyfit(x, y, 1)
    slope = max(float(slope), 0.0)
    if slope == 0.0:
        intercept = float(y.max())
    return int(round(intercept)), int(math.ceil(slope))
