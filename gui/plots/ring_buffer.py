"""Fixed-capacity numpy ring buffers for plot data: appends are O(1), memory is bounded for long runs.

Stored column by column (one contiguous row of memory per series): a redraw reduces whole columns
(min/max per bucket), and numpy reduces a contiguous 1M-point column about 3x faster than one strided
through interleaved rows. `PeakRingBuffer` also keeps each block of rows' min and max as rows arrive,
so a redraw of a million steps reduces a few thousand block summaries instead of every value.
"""

from __future__ import annotations

import numpy as np

from gpu_train_monitor.gui.plots.decimate import decimate_visible, visible_slice

BLOCK = 128  # rows per summary block of a PeakRingBuffer
MIN_BLOCKS_PER_BUCKET = 4  # below this the buckets would have to widen too much to align with blocks


class RingBuffer:
    """Parallel columns of float64 (x and one or more y series) that keep the most recent `capacity` rows."""

    def __init__(self, capacity: int, columns: int) -> None:
        self.capacity = capacity
        # doubled: the live rows are always one contiguous slice of every column
        self._data = np.full((columns, 2 * capacity), np.nan)
        self._start = 0
        self._size = 0
        self.appended = 0  # rows appended since the last clear: row i is the (appended - len + i)-th

    def __len__(self) -> int:
        return self._size

    @property
    def oldest(self) -> int:
        """The count since the last clear of the oldest row kept (rows dropped off the front)."""
        return self.appended - self._size

    def clear(self) -> None:
        self._start = 0
        self._size = 0
        self.appended = 0

    def extend(self, rows: np.ndarray) -> None:
        """Append rows of shape (n, columns)."""
        rows = np.asarray(rows, dtype=np.float64).reshape(-1, self._data.shape[0])
        self.appended += len(rows)
        if len(rows) >= self.capacity:
            rows = rows[-self.capacity :]
            self._data[:, : len(rows)] = rows.T
            self._start, self._size = 0, len(rows)
            return
        end = self._start + self._size
        if end + len(rows) > self._data.shape[1]:  # compact the live rows to the front
            self._data[:, : self._size] = self._data[:, self._start : end]
            self._start, end = 0, self._size
        self._data[:, end : end + len(rows)] = rows.T
        self._size += len(rows)
        if self._size > self.capacity:
            drop = self._size - self.capacity
            self._start += drop
            self._size -= drop

    def append(self, *values: float) -> None:
        self.extend(np.array([values], dtype=np.float64))

    def column(self, index: int) -> np.ndarray:
        """A read-only, contiguous view of one column, oldest first."""
        view = self._data[index, self._start : self._start + self._size]
        view.flags.writeable = False
        return view

    def columns(self, first: int, stop: int) -> np.ndarray:
        """A read-only view of columns first..stop-1 as rows of shape (stop - first, len): several series
        decimated in one numpy call."""
        view = self._data[first:stop, self._start : self._start + self._size]
        view.flags.writeable = False
        return view

    def last(self, index: int) -> float | None:
        return float(self._data[index, self._start + self._size - 1]) if self._size else None

    def decimate(
        self, first: int, stop: int, x_range: tuple[float, float] | None, buckets: int, x_column: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        """Columns first..stop-1 against column `x_column` (sorted: steps, seconds), cut to `x_range`
        (None: all) and peak-decimated to about 2 * `buckets` points (see `gpu_train_monitor.gui.plots.decimate`)."""
        return decimate_visible(self.column(x_column), self.columns(first, stop), x_range, buckets)


class PeakRingBuffer(RingBuffer):
    """A RingBuffer that keeps the min and max of every BLOCK rows of columns first..stop-1.

    Blocks are aligned to the count of rows appended, so they stay valid as old rows drop off the
    front. A redraw of many rows takes buckets of whole blocks (bucket width rounded up to a multiple
    of BLOCK) and reduces only the summaries, plus the raw rows of a partial bucket at each end: the
    same min/max per bucket as `peak_decimate`, with bucket edges on block boundaries.
    """

    def __init__(
        self, capacity: int, columns: int, first: int = 1, stop: int | None = None, block: int = BLOCK
    ) -> None:
        super().__init__(capacity, columns)
        self._first, self._stop = first, columns if stop is None else stop
        self._block = block
        slots = capacity // block + 2  # every block the live rows touch, plus one filling
        self._mins = np.full((self._stop - self._first, slots), np.nan)
        self._maxs = np.full((self._stop - self._first, slots), np.nan)
        self._summarized = 0  # rows (counted like `appended`) whose blocks are summarized

    def clear(self) -> None:
        super().clear()
        self._summarized = 0

    def extend(self, rows: np.ndarray) -> None:
        super().extend(rows)
        block = self._block
        start = max(self._summarized, -(-self.oldest // block) * block)
        end = (self.appended // block) * block
        if end > start:  # blocks completed by these rows
            live = self.columns(self._first, self._stop)[:, start - self.oldest : end - self.oldest]
            blocks = live.reshape(len(live), -1, block)
            slots = np.arange(start // block, end // block) % self._mins.shape[1]
            with np.errstate(invalid="ignore"):
                self._mins[:, slots] = blocks.min(axis=2)  # NaN propagates: a diverged step stays a gap
                self._maxs[:, slots] = blocks.max(axis=2)
        self._summarized = max(self._summarized, end)

    def decimate(
        self, first: int, stop: int, x_range: tuple[float, float] | None, buckets: int, x_column: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        x = self.column(x_column)
        part = visible_slice(x, x_range)
        plan = self._plan(part, buckets) if (first, stop) == (self._first, self._stop) else None
        if plan is None:  # few rows, or buckets too narrow for whole blocks: reduce the rows themselves
            return super().decimate(first, stop, x_range, buckets, x_column)
        width, first_edge, last_edge = plan  # counted like `appended`; whole buckets between the edges
        ys, at = self.columns(first, stop), -self.oldest  # `at` turns a count into a live row index
        with np.errstate(invalid="ignore"):
            lows = [
                _reduce_groups(self._summaries(self._mins, first_edge, last_edge), width // self._block, np.minimum)
            ]
            highs = [
                _reduce_groups(self._summaries(self._maxs, first_edge, last_edge), width // self._block, np.maximum)
            ]
            starts = [x[first_edge + at : last_edge + at : width]]
            lo, hi = part.start - at, part.stop - at
            for a, b, index in ((lo, first_edge, 0), (last_edge, hi, None)):  # partial buckets at the ends
                if b > a:
                    raw = ys[:, a + at : b + at]
                    index = len(lows) if index is None else index
                    lows.insert(index, raw.min(axis=1, keepdims=True))
                    highs.insert(index, raw.max(axis=1, keepdims=True))
                    starts.insert(index, x[a + at : a + at + 1])
        out_x = np.repeat(np.concatenate(starts), 2)
        out_y = np.empty((len(ys), len(out_x)))
        out_y[:, 0::2], out_y[:, 1::2] = np.concatenate(lows, axis=1), np.concatenate(highs, axis=1)
        return out_x, out_y

    def _plan(self, part: slice, buckets: int) -> tuple[int, int, int] | None:
        """Bucket width (whole blocks) and the first and last bucket edges inside the visible rows, or
        None when the plain reduction is as good (a short series, or buckets under a few blocks wide)."""
        n = part.stop - part.start
        size = -(-n // buckets)
        if n <= 2 * buckets or size < MIN_BLOCKS_PER_BUCKET * self._block:
            return None
        width = -(-size // self._block) * self._block
        lo, hi = self.oldest + part.start, self.oldest + part.stop
        first_edge = -(-lo // width) * width
        last_edge = (min(hi, self._summarized) // width) * width  # the newest rows may not fill a block yet
        return (width, first_edge, last_edge) if last_edge - first_edge >= width else None

    def _summaries(self, table: np.ndarray, first_row: int, stop_row: int) -> np.ndarray:
        """The block summaries of rows first_row..stop_row-1 (block-aligned), oldest first: slices, not
        a gather (numpy's fancy indexing cost more than the reduction)."""
        slots = table.shape[1]
        a, b = (first_row // self._block) % slots, (stop_row // self._block) % slots
        return table[:, a:b] if a < b else np.concatenate([table[:, a:], table[:, :b]], axis=1)


def _reduce_groups(values: np.ndarray, per: int, op: np.ufunc) -> np.ndarray:
    """`op` over each run of `per` columns of `values` (k, m * per) -> (k, m): as `per` elementwise passes,
    several times faster than a numpy reduction along a short last axis."""
    groups = values.reshape(len(values), -1, per)
    out = groups[:, :, 0].copy()
    for j in range(1, per):
        op(out, groups[:, :, j], out=out)
    return out
