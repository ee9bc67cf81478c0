"""Peak (min/max) decimation of long series to what a plot can show.

pyqtgraph's own peak downsampling still scans the whole array on every `setData` (bounds, finite
checks): 1M loss points cost ~30 ms a redraw here. Cutting the visible range to ~2 points per pixel
column before `setData`, keeping each bucket's min and max, keeps the curve's shape (spikes and NaN
excursions included) at a few thousand points. Series sharing one x (a loss and its EMA, the memory
plot's five columns, a compare view's curves on a common step axis) are reduced in one numpy call.
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
    """At most 2 * `buckets` points (plus a tail shorter than a bucket): each bucket's min and max of `y`."""
    if len(x) <= 2 * buckets:
        return x, y
    out_x, out_ys = peak_decimate_many(x, np.asarray(y)[np.newaxis], buckets)
    return out_x, out_ys[0]


def peak_decimate_many(x: np.ndarray, ys: np.ndarray, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """`peak_decimate` of every row of `ys` (shape (series, len(x))) against the shared `x`.

    Returns (x, ys) untouched when short enough; otherwise new arrays with ys of shape (series, points).
    """
    n = len(x)
    if n <= 2 * buckets:
        return x, ys
    size = -(-n // buckets)  # ceil
    whole = (n // size) * size
    yb = ys[:, :whole].reshape(len(ys), -1, size)  # a view when each row is contiguous
    out_y = np.empty((len(ys), 2 * (whole // size) + n - whole))
    pairs = out_y[:, : 2 * (whole // size)].reshape(len(ys), -1, 2)
    with np.errstate(invalid="ignore"):
        yb.min(axis=2, out=pairs[:, :, 0])  # NaN propagates: a diverged step shows as a gap
        yb.max(axis=2, out=pairs[:, :, 1])
    out_y[:, 2 * (whole // size) :] = ys[:, whole:]  # the tail that does not fill a bucket, as it is
    out_x = np.concatenate([np.repeat(x[:whole:size], 2), x[whole:]])
    return out_x, out_y


def decimate_visible(
    x: np.ndarray, ys: np.ndarray, x_range: tuple[float, float] | None, buckets: int
) -> tuple[np.ndarray, np.ndarray]:
    """The part of sorted `x` inside `x_range` (None: all of it), every row of `ys` peak-decimated to
    about 2 * `buckets` points: what a plot `buckets` pixels wide can show of any number of series."""
    part = visible_slice(x, x_range)
    return peak_decimate_many(x[part], ys[:, part], buckets)
