"""Every rank of a data-parallel run on the memory plot: one colour per rank, one line style per kind
(allocated solid, reserved dashed, peak dotted, device-wide used dash-dotted), named in the legend
('GPU 1 allocated', 'rank 1 (cpu) RSS'), a rank's lines on one legend row.

The lines share one `PeakRingBuffer` (`gpu_train_monitor.gui.plots.rank_series` says its columns) and are drawn as the
plot's own lines are: peak-decimated to the plot's width in one numpy call, from block summaries once the run is long,
so 8 ranks add one reduction of a few thousand summaries per redraw, not 32 passes over every report. The
buffer starts small and doubles as the run grows, up to VALUES_KEPT values (the oldest reports then drop
off, as the plot's own series do past its capacity).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from gpu_train_monitor.gui.plots.live_plot import draw_decimated
from gpu_train_monitor.gui.plots.rank_series import RankLayout
from gpu_train_monitor.gui.plots.ring_buffer import PeakRingBuffer
from gpu_train_monitor.gui.qt import palette

# one colour per rank (cycled past 8 ranks; the names still tell them apart)
PALETTE = (
    palette.TAB_BLUE,
    palette.TAB_ORANGE,
    palette.TAB_GREEN,
    palette.TAB_RED,
    palette.TAB_PURPLE,
    palette.TAB_BROWN,
    palette.TAB_PINK,
    palette.TAB_CYAN,
)
STYLES = {
    "allocated": Qt.PenStyle.SolidLine,
    "reserved": Qt.PenStyle.DashLine,
    "peak": Qt.PenStyle.DotLine,
    "device_used": Qt.PenStyle.DashDotLine,
}
FIRST_CAPACITY = 1024  # rows before the buffer first grows
VALUES_KEPT = 3_000_000  # at most this many values (8 ranks on GPUs: 90k reports, 2.5 h at 10 a second)
# rows per summary block: a bucket must span 4 blocks to use them, and a 900-pixel plot of 100k reports
# has ~110 reports a bucket (the default 128 left them unused: 32 lines reduced row by row, ~10 ms)
BLOCK = 16
MAX_ROWS = 200_000  # as many reports as the plot's own series keep (`gpu_train_monitor.gui.plots.memory_plot.CAPACITY`)


def rank_colour(rank: int) -> tuple[int, int, int]:
    return PALETTE[rank % len(PALETTE)]


class RankLines:
    """The ranks' lines on `plot` (listed in `legend`); the owner says when to draw (`refresh`)."""

    def __init__(self, plot: pg.PlotWidget, legend: pg.LegendItem) -> None:
        self.plot, self.legend = plot, legend
        self.layout: RankLayout | None = None
        self.curves: list[pg.PlotCurveItem] = []
        self.kinds: list[str] = []  # each curve's kind (a `gpu_train_monitor.gui.plots.memory_plot.SERIES` key)
        self.columns = 1
        self.data = PeakRingBuffer(FIRST_CAPACITY, 1)
        self._hidden_kinds: set[str] = set()

    @property
    def active(self) -> bool:
        """Whether a data-parallel run's ranks are shown (the plot's own lines then step aside)."""
        return self.layout is not None

    def set_layout(self, layout: RankLayout | None) -> bool:
        """Lines for `layout`'s ranks (None: none); the same layout keeps its lines and data. Returns whether
        the lines changed."""
        if layout == self.layout:
            return False
        item = self.plot.getPlotItem()
        for curve in self.curves:
            self.legend.removeItem(curve)
            item.removeItem(curve)
        self.curves, self.kinds = [], []
        self.layout = layout
        self.columns = layout.columns if layout is not None else 1
        self.data = PeakRingBuffer(FIRST_CAPACITY, self.columns, block=BLOCK)
        if layout is None:
            return True
        for line in layout.lines():
            pen = pg.mkPen(
                rank_colour(line.rank), width=1.5 if line.kind == "allocated" else 1, style=STYLES[line.kind]
            )
            # PlotCurveItem: a third of PlotDataItem's setData cost, which 32 lines a redraw would feel
            curve = pg.PlotCurveItem(pen=pen, name=line.name, connect="finite")
            curve.setToolTip(line.name)
            curve.setVisible(line.kind not in self._hidden_kinds)
            item.addItem(curve)  # named: the plot's legend lists it
            self.curves.append(curve)
            self.kinds.append(line.kind)
        return True

    @property
    def legend_columns(self) -> int:
        """Legend entries a row: a rank's lines side by side while ranks are shown."""
        return len(self.layout.kinds) if self.layout is not None else 1

    def set_kind_visible(self, kind: str, visible: bool) -> None:
        """Show or hide every rank's line of one kind (the plot's check box for that kind)."""
        (self._hidden_kinds.discard if visible else self._hidden_kinds.add)(kind)
        for curve, curve_kind in zip(self.curves, self.kinds):
            if curve_kind == kind:
                curve.setVisible(visible)

    def extend(self, rows: np.ndarray) -> None:
        """Append rows in the layout's columns (seconds first), growing the buffer while it may."""
        rows = np.asarray(rows, dtype=np.float64).reshape(-1, self.columns)
        need = len(self.data) + len(rows)
        limit = max(FIRST_CAPACITY, min(MAX_ROWS, VALUES_KEPT // self.columns))
        if need > self.data.capacity and self.data.capacity < limit:
            bigger = PeakRingBuffer(min(limit, max(2 * self.data.capacity, need)), self.columns, block=BLOCK)
            bigger.extend(self.data.columns(0, self.columns).T)
            self.data = bigger
        self.data.extend(rows)

    def clear(self) -> None:
        self.data.clear()

    def refresh(self) -> None:
        """Draw every line from the buffer (decimated to what the plot shows)."""
        if self.curves:
            draw_decimated(self.plot, self.curves, self.data)
