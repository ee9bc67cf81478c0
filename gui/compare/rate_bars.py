"""The comparison's images/s plot: one bar per run at its median with the 10th..90th percentiles as an error
bar, each named by the run's label cut to the bar's room, and a line saying what will come before the first
reading (no value axis then: it had nothing to scale).

Apart from the race's loss curves (`gpu_train_monitor.gui.compare.view`) because the bars are drawn and labelled their
own way. Its texts keep the view's translation context ("CompareView").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QFontMetrics

from gpu_train_monitor.gui.compare.race import Race
from gpu_train_monitor.gui.plots.live_plot import settle_axes

BAR_WIDTH = 0.6


class RateBars:
    """The bars, error bars and placeholder text in the images/s plot `plot` (made by the view)."""

    def __init__(self, plot: pg.PlotWidget) -> None:
        self.plot = plot
        self.plot.setToolTip(
            QCoreApplication.translate(
                "CompareView",
                "Each run's median images/s over its reports after the first (warm-up), "
                "with the 10th to 90th percentile as the error bar",
            )
        )
        self.plot.getPlotItem().getViewBox().setMouseEnabled(x=False, y=False)
        self.plot.getPlotItem().getAxis("left").enableAutoSIPrefix(False)  # never "(x0.001)" on images/s
        self.no_rate_text = pg.TextItem(
            QCoreApplication.translate("CompareView", "no images/s yet:\nbars come after\neach run's warm-up"),
            color=(110, 110, 110),
            anchor=(0.5, 0.5),
        )
        self.no_rate_text.setZValue(10)
        self.plot.addItem(self.no_rate_text, ignoreBounds=True)
        self.plot.getPlotItem().setXRange(-0.6, 0.6, padding=0)
        self._show_no_rate(True, 0)
        self.bars = pg.BarGraphItem(x=[], height=[], width=BAR_WIDTH, pen=pg.mkPen((60, 60, 60), width=1))
        self.error_bars = pg.ErrorBarItem(x=np.array([]), y=np.array([]), beam=0.2, pen=pg.mkPen((40, 40, 40), width=1))
        self.plot.addItem(self.bars)
        self.plot.addItem(self.error_bars)

    def begin(self, races: Sequence[Race]) -> None:
        """A comparison starts: a named place for each race's bar."""
        self.label(races)
        self.plot.getPlotItem().setXRange(-0.6, len(races) - 0.4, padding=0)

    def draw(self, races: Sequence[Race], rates: Sequence[tuple[float, float, float] | None]) -> None:
        """Each race's bar at `rates`' (images/s, p10, p90), or none yet (0 high)."""
        self._show_no_rate(not any(rates), len(races))
        self.label(races)
        x = np.array([race.index for race in races], dtype=float)
        mid = np.array([r[0] if r else 0.0 for r in rates])
        low = np.array([r[0] - r[1] if r else 0.0 for r in rates])
        high = np.array([r[2] - r[0] if r else 0.0 for r in rates])
        self.bars.setOpts(x=x, height=mid, width=BAR_WIDTH, brushes=[pg.mkBrush(*race.colour) for race in races])
        self.error_bars.setData(x=x, y=mid, top=high, bottom=low, beam=0.2)
        settle_axes(self.plot)

    def heights(self) -> list[float]:
        """The heights the bars show, one per run (0 for a run with no rate yet)."""
        heights = self.bars.opts.get("height")
        return [] if heights is None else [float(h) for h in heights]

    def label(self, races: Sequence[Race]) -> None:
        """Each bar named by its run's label, cut with "…" to the bar's share of the plot's width."""
        axis = self.plot.getPlotItem().getAxis("bottom")
        width = self.plot.getPlotItem().getViewBox().width() or self.plot.width()
        room = max(int(width / max(len(races), 1)) - 6, 24)
        metrics = QFontMetrics(axis.style["tickFont"] or self.plot.font())
        axis.setTicks(
            [[(race.index, metrics.elidedText(race.label, Qt.TextElideMode.ElideRight, room)) for race in races]]
        )

    def labels(self) -> list[str]:
        """The bars' names as the axis shows them."""
        ticks = self.plot.getPlotItem().getAxis("bottom")._tickLevels
        return [] if not ticks else [text for _, text in ticks[0]]

    def _show_no_rate(self, empty: bool, count: int) -> None:
        """Before the first images/s reading: no value axis (it had nothing to scale: "x0.001", -400..400),
        a line that says what will come instead, over the middle of the `count` bars' places."""
        item = self.plot.getPlotItem()
        self.no_rate_text.setVisible(empty)
        item.getAxis("left").setStyle(showValues=not empty)
        item.getAxis("left").setLabel("" if empty else QCoreApplication.translate("CompareView", "images/s"))
        if empty:
            item.setYRange(0, 1, padding=0)
            self.no_rate_text.setPos((count - 1) / 2, 0.5)
        else:
            item.enableAutoRange(y=True)
