"""The EMA's step-by-step definition, kept once: the vectorised implementations are checked against it."""

from __future__ import annotations

import math


def reference(losses: list[float], alpha: float) -> list[float]:
    """TensorBoard-style debiased EMA, skipping non-finite values, one step at a time."""
    out, raw, count, last = [], 0.0, 0, math.nan
    for x in losses:
        if math.isfinite(x):
            count += 1
            raw = alpha * raw + (1 - alpha) * x
            last = raw / (1 - alpha**count) if alpha > 0 else raw
        out.append(last)
    return out
