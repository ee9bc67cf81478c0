"""Peak (min/max) decimation of a long series to what a plot can show.

pyqtgraph's own peak downsampling still scans the whole array on every `setData` (bounds, finite
checks): 1M loss points cost ~30 ms a redraw here. Cutting the visible range to ~2 points per pixel
column before `setData`, keeping each bucket's min and max, keeps the curve's shape (spikes and NaN
excursions included) at a few thousand points.
"""

from __future__ import annotations

import numpy as np


def visible_slice(x: np.ndarray, x_range: tuple[float, float] | None) -> slice:
    """Indices of sorted `x` inside `x_range`, widened by one point each side so lines reach the edges."""
    if x_range is None or len(x) == 0:
        return slice(0, len(x))
    lo = max(int(np.searchsorted(x, x_range[0], side="left")) - 1, 0)
    hi = min(int(np.searchsorted(x, x_range[1], side="right")) + 1, len(x))
    return slice(lo, hi)


def peak_decimate(x: np.ndarray, y: np.ndarray, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """At most 2 * `buckets` points: each bucket's min and max of `y`."""
    n = len(x)
    if n <= 2 * buckets:
        return x, y
    size = -(-n // buckets)  # ceil
    whole = (n // size) * size
    yb = y[:whole].reshape(-1, size)
    with np.errstate(invalid="ignore"):
        lows = yb.min(axis=1)  # NaN propagates: a diverged step shows as a gap
        highs = yb.max(axis=1)
    xs = x[:whole:size]
    out_x = np.repeat(xs, 2)
    out_y = np.empty(2 * len(xs))
    out_y[0::2], out_y[1::2] = lows, highs
    if whole < n:  # the tail that does not fill a bucket is kept as it is
        out_x = np.concatenate([out_x, x[whole:]])
        out_y = np.concatenate([out_y, y[whole:]])
    return out_x, out_y
