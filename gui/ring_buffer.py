"""Fixed-capacity numpy ring buffers for plot data: appends are O(1), memory is bounded for long runs."""

from __future__ import annotations

import numpy as np


class RingBuffer:
    """Parallel columns of float64 (x and one or more y series) that keep the most recent `capacity` rows."""

    def __init__(self, capacity: int, columns: int) -> None:
        self.capacity = capacity
        self._data = np.full((2 * capacity, columns), np.nan)  # doubled: a view is always one contiguous slice
        self._start = 0
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def clear(self) -> None:
        self._start = 0
        self._size = 0

    def extend(self, rows: np.ndarray) -> None:
        """Append rows of shape (n, columns)."""
        rows = np.asarray(rows, dtype=np.float64).reshape(-1, self._data.shape[1])
        if len(rows) >= self.capacity:
            rows = rows[-self.capacity:]
            self._data[: len(rows)] = rows
            self._start, self._size = 0, len(rows)
            return
        end = self._start + self._size
        if end + len(rows) > len(self._data):  # compact the live rows to the front
            self._data[: self._size] = self._data[self._start:end]
            self._start, end = 0, self._size
        self._data[end:end + len(rows)] = rows
        self._size += len(rows)
        if self._size > self.capacity:
            drop = self._size - self.capacity
            self._start += drop
            self._size -= drop

    def append(self, *values: float) -> None:
        self.extend(np.array([values], dtype=np.float64))

    def column(self, index: int) -> np.ndarray:
        """A read-only view of one column, oldest first."""
        view = self._data[self._start:self._start + self._size, index]
        view.flags.writeable = False
        return view

    def last(self, index: int) -> float | None:
        return float(self._data[self._start + self._size - 1, index]) if self._size else None
