"""A recorded run's training images per second against step, one point per report, kept in a ring buffer
and drawn decimated like the live plots (only when it changed and can be seen)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication

from gpu_train_monitor.gui.plots.live_plot import draw_decimated, is_shown, live_plot_widget
from gpu_train_monitor.gui.plots.ring_buffer import RingBuffer
from gpu_train_monitor.gui.qt import palette

RATE_CAPACITY = 200_000  # reports kept


class RatePlot:
    """The images/s plot (`plot`, the widget to place) and its data (`data`: step, images/s)."""

    def __init__(self) -> None:
        self.data = RingBuffer(RATE_CAPACITY, 2)
        self.plot = live_plot_widget()
        item = self.plot.getPlotItem()
        item.setTitle(QCoreApplication.translate("RatePlot", "Training images per second"))
        item.setLabel("bottom", QCoreApplication.translate("RatePlot", "step"))
        item.setLabel("left", QCoreApplication.translate("RatePlot", "images/s"))
        item.getAxis("bottom").enableAutoSIPrefix(False)  # steps are counted, not scaled (no "x1000")
        self.curve = item.plot(pen=pg.mkPen(palette.TAB_BLUE, width=1), connect="finite")
        self._dirty = False

    def clear(self) -> None:
        self.data.clear()
        self._dirty = True

    def extend(self, rows: np.ndarray) -> None:
        """Reports as rows of step, images/s."""
        if len(rows):
            self.data.extend(rows)
            self._dirty = True

    def refresh(self) -> bool:
        """Redraw if reports arrived and the plot can be seen; returns whether it drew."""
        if not self._dirty or not is_shown(self.plot):
            return False
        self._dirty = False
        draw_decimated(self.plot, (self.curve,), self.data)
        return True
