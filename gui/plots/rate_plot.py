"""A recorded run's training images per second (tokens per second for a text run) against step, one point per
report, kept in a ring buffer and drawn decimated like the live plots (only when it changed and can be seen)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication

from gpu_train_monitor.gui.i18n.throughput_text import plot_title, unit_text
from gpu_train_monitor.gui.plots.live_plot import draw_decimated, is_shown, live_plot_widget
from gpu_train_monitor.gui.plots.ring_buffer import RingBuffer
from gpu_train_monitor.gui.qt import palette

RATE_CAPACITY = 200_000  # reports kept


class RatePlot:
    """The images/s plot (`plot`, the widget to place) and its data (`data`: step, images/s, or another unit:
    `set_unit`)."""

    def __init__(self) -> None:
        self.data = RingBuffer(RATE_CAPACITY, 2)
        self.plot = live_plot_widget()
        self.per_sample = 1  # the unit's figures per sample/s (a text run's seq_len)
        item = self.plot.getPlotItem()
        item.setLabel("bottom", QCoreApplication.translate("RatePlot", "step"))
        self.set_unit("images/s")
        item.getAxis("bottom").enableAutoSIPrefix(False)  # steps are counted, not scaled (no "x1000")
        self.curve = item.plot(pen=pg.mkPen(palette.TAB_BLUE, width=1), connect="finite")
        self._dirty = False

    def set_unit(self, unit: str, per_sample: int = 1) -> None:
        """Plot the run's throughput in `unit` (images/s, tokens/s, samples/s): reports' samples/s times
        `per_sample`. Call before `extend`."""
        self.per_sample = per_sample
        item = self.plot.getPlotItem()
        item.setTitle(plot_title(unit))
        item.setLabel("left", unit_text(unit))

    def clear(self) -> None:
        self.data.clear()
        self._dirty = True

    def extend(self, rows: np.ndarray) -> None:
        """Reports as rows of step, samples/s (plotted in the unit: `set_unit`)."""
        if len(rows):
            if self.per_sample != 1:
                rows = rows * [1.0, float(self.per_sample)]
            self.data.extend(rows)
            self._dirty = True

    def refresh(self) -> bool:
        """Redraw if reports arrived and the plot can be seen; returns whether it drew."""
        if not self._dirty or not is_shown(self.plot):
            return False
        self._dirty = False
        draw_decimated(self.plot, (self.curve,), self.data)
        return True
