"""The loss smoothing: a bias-corrected EMA (TensorBoard's), computed with numpy.

The window's loss plot (gpu_train_monitor.gui.plots.loss_plot) and the run exports (gpu_train_monitor.export.run_export)
both use it, with the same default weight (DEFAULT_SMOOTHING), so an exported "smoothed loss" is the curve the window
showed at the same smoothing. numpy loads when the EMA is first computed: the CLI's parser reads the default from here.

A Python loop costs ~7 µs a step in the GUI thread: changing the smoothing recomputed a 2M-step
history for ~14 s with the window frozen, and filling a 1M-step plot took ~8 s. Here the recurrence
raw[j] = a * raw[j-1] + (1 - a) * x[j] is evaluated in blocks as
raw[j] = a^(j+1) * (raw[-1] + (1 - a) * cumsum(x[i] / a^(i+1))[j]), each block short enough that
a^(block length) stays far above the smallest float.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

DEFAULT_SMOOTHING = 0.9  # the EMA weight the loss plot starts with and the exports use unless told otherwise
SMALLEST_POWER = 1e-60  # a^(block length) >= this: x / a^(i+1) cannot overflow for |x| <= LARGEST_LOSS
LARGEST_LOSS = 1e200  # beyond this the blocked form could overflow: such a history goes step by step


@dataclass
class EmaState:
    """Where the EMA stands after the losses seen so far (non-finite ones skipped)."""

    raw: float = 0.0  # the uncorrected average
    count: int = 0  # finite losses averaged
    last: float = math.nan  # the last corrected value shown (NaN before the first finite loss)


def debiased_ema(losses: np.ndarray, alpha: float, state: EmaState) -> np.ndarray:
    """The EMA at each of `losses`, continuing from `state` (updated in place).

    A non-finite loss is skipped: the EMA stays where it was (NaN before any finite loss)."""
    import numpy as np  # here, not at the top: the CLI's parser imports this module for DEFAULT_SMOOTHING

    x = np.asarray(losses, dtype=np.float64)
    finite = np.isfinite(x)
    values = x[finite]
    if len(values) == 0:
        return np.full(len(x), state.last)
    raws = _recurrence(values, alpha, state.raw)
    counts = state.count + np.arange(1, len(values) + 1)
    emas = raws / (1.0 - alpha**counts) if alpha > 0 else raws
    seen = np.cumsum(finite) - 1  # index into `emas` of the last finite loss at or before each step
    out = np.where(seen >= 0, emas[np.maximum(seen, 0)], state.last)
    state.raw, state.count, state.last = float(raws[-1]), int(counts[-1]), float(emas[-1])
    return out


def _recurrence(values: np.ndarray, alpha: float, raw: float) -> np.ndarray:
    """raw[j] = alpha * raw[j-1] + (1 - alpha) * values[j], starting from `raw`."""
    import numpy as np  # loaded by debiased_ema already

    if alpha == 0:
        return values.copy()
    out = np.empty(len(values))
    if np.abs(values).max() > LARGEST_LOSS:
        for i, v in enumerate(values):
            raw = alpha * raw + (1 - alpha) * v
            out[i] = raw
        return out
    block = max(1, int(math.log(SMALLEST_POWER) / math.log(alpha)))
    powers = alpha ** np.arange(1, min(block, len(values)) + 1)  # a^1 .. a^block
    for start in range(0, len(values), block):
        chunk = values[start : start + block]
        p = powers[: len(chunk)]
        out[start : start + len(chunk)] = p * (raw + (1 - alpha) * np.cumsum(chunk / p))
        raw = float(out[start + len(chunk) - 1])
    return out
