"""Allocation retries on the memory plot: a marker where CUDA's caching allocator had to free its cache and call
cudaMalloc again to fit a request (memory fragmented), as the readings' `alloc_retries` count rises.

A fragmented run can retry at every step: one marker per `MIN_GAP_S` at most, saying how many retries it covers, so
the plot stays readable and cheap to draw.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QObject

from gpu_train_monitor.gui.plots.memory_plot import MemoryPlot
from gpu_train_monitor.gui.qt.locale_format import integer

MIN_GAP_S = 30.0


class RetryMarks(QObject):
    """Watches the readings shown on `plot` and marks where the allocator's retries rose."""

    def __init__(self, plot: MemoryPlot, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.plot = plot
        self._counted: tuple[str, int] | None = None  # (device, retries) at the last marker, or at the first reading
        self._marked_at = -math.inf

    def reset(self) -> None:
        """A new run: its first reading is the new baseline."""
        self._counted = None
        self._marked_at = -math.inf

    def see(self, sample: Any) -> bool:
        """Take one reading (a `MemorySample`); returns whether it added a marker."""
        retries = getattr(sample, "alloc_retries", None)
        if retries is None:
            return False
        counted = self._counted
        if counted is None or counted[0] != sample.device or retries < counted[1]:  # a baseline (another process)
            self._counted = (sample.device, retries)
            return False
        if retries == counted[1] or sample.time_s - self._marked_at < MIN_GAP_S:
            return False
        self.plot.add_marker(
            sample.time_s, self.tr("{count} allocation retries").format(count=integer(retries - counted[1]))
        )
        self._counted = (sample.device, retries)
        self._marked_at = sample.time_s
        return True
