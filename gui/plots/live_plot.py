"""Building blocks that keep a live pyqtgraph plot cheap to redraw while a run trains beside it.

Measured on a 2-core machine (tests/benchmarks/gui_latency.py): a redraw of the loss plot cost ~7.5 ms
of GUI-thread CPU, ~6 of them in the axes, because every report moved the auto-range and both axes
rebuilt their ticks and tick text; with the range holding still the same redraw costs ~2 ms. So:

- `LiveViewBox`: auto-range that holds the range while the data stays inside it, then grows it with
  headroom. The A button, the menu's View All and mouse zoom/pan behave as in any pyqtgraph plot.
- `decimated_for` / `draw_decimated`: cut a RingBuffer's series (sharing its x column) to the visible
  range and peak-decimate them to the plot's width in one numpy call (from block summaries for a
  `PeakRingBuffer`), then `setData` each curve.
- `settle_axes` (called by `set_curves`): when the range does move, rebuild the axes in the redraw
  timer's event, so the paint after it is no longer the one long stretch of GUI work.
- `is_shown`: a plot in a hidden tab or a collapsed splitter is not redrawn; it stays dirty until shown.
- `legend_above`: the legend in a row of its own above the data area, where no curve can pass under it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPicture
from PySide6.QtWidgets import QWidget

from gpu_train_monitor.gui.plots.ring_buffer import RingBuffer

MIN_BUCKETS = 200  # a narrow (or not yet laid out) plot still gets this many min/max pairs
# (below, above) each axis's data, as a fraction of the data's span, added when the range must move
X_HEADROOM = (0.0, 0.25)  # time and steps grow to the right: room for a quarter more before moving
Y_HEADROOM = (0.1, 0.1)
MIN_FILL = 0.5  # a range the data fills less than half of (a new run, a cleared plot) is refitted
TOLERANCE = 0.01  # of the held span: pixel padding wobble is not "outside"


class LiveViewBox(pg.ViewBox):
    """A ViewBox whose auto-range moves only when the data leaves it or fills under half of it.

    pyqtgraph's auto-range fits the data exactly at every change, so a live plot's axes regenerated
    their ticks and text at every report. This one fits with headroom and then holds: the axes keep
    their cached drawing until the data grows past the headroom.
    """

    def __init__(
        self,
        x_headroom: tuple[float, float] = X_HEADROOM,
        y_headroom: tuple[float, float] = Y_HEADROOM,
        **kwargs: object,
    ) -> None:
        self._headroom = (x_headroom, y_headroom)
        self._held: list[tuple[float, float] | None] = [None, None]
        super().__init__(**kwargs)

    def held_range(self, axis: int) -> tuple[float, float] | None:
        """The data range (before pyqtgraph's padding) auto-range is holding on `axis` (0: x, 1: y)."""
        return self._held[axis]

    def childrenBounds(self, frac=None, orthoRange=(None, None), items=None):  # noqa: N802 (pyqtgraph's name)
        bounds = super().childrenBounds(frac=frac, orthoRange=orthoRange, items=items)
        if items is not None:  # a question about particular items gets their exact bounds
            return bounds
        return [self._hold(axis, b) for axis, b in enumerate(bounds)]

    def enableAutoRange(self, axis=None, enable=True, x=None, y=None):  # noqa: N802
        before = list(self.state["autoRange"])
        super().enableAutoRange(axis=axis, enable=enable, x=x, y=y)
        for ax in (0, 1):  # following (again): the next fit starts from the data, not the old hold
            if self.state["autoRange"][ax] is not False and before[ax] is False:
                self._held[ax] = None

    def _hold(self, axis: int, bounds: list[float] | None) -> list[float] | None:
        if bounds is None or bounds[0] is None or bounds[1] is None:
            return bounds
        lo, hi = float(bounds[0]), float(bounds[1])
        held = self._held[axis]
        if held is not None:
            h_lo, h_hi = held
            tol = TOLERANCE * (h_hi - h_lo)
            if h_lo - tol <= lo and hi <= h_hi + tol and hi - lo >= MIN_FILL * (h_hi - h_lo):
                return [h_lo, h_hi]
        below, above = self._headroom[axis]
        span = hi - lo
        new_lo, new_hi = lo - below * span, hi + above * span
        if lo >= 0 > new_lo:  # headroom never invents negative steps, seconds, bytes or losses
            new_lo = 0.0
        self._held[axis] = (new_lo, new_hi)
        return [new_lo, new_hi]


def live_plot_widget(**view_box_options: object) -> pg.PlotWidget:
    """A PlotWidget on a `LiveViewBox` (options: x_headroom, y_headroom)."""
    return pg.PlotWidget(viewBox=LiveViewBox(**view_box_options))


class LegendAbove(pg.LegendItem):
    """A legend laid out by its plot (not floating over the view box as pyqtgraph's is): it takes the size its
    entries need, in the plot's top-axis row, so it never covers a curve, a marker or a marker's text."""

    def __init__(self, columns: int) -> None:
        super().__init__(offset=None, colCount=columns, frame=False, labelTextSize="8pt", verSpacing=-6)
        self.layout.setContentsMargins(0, 0, 0, 0)  # every pixel of height it takes is the data's

    def updateSize(self) -> None:  # noqa: N802 (pyqtgraph's name)
        self.updateGeometry()  # the plot's layout gives it its place; pyqtgraph's own moved it to (0, 0)

    def mouseDragEvent(self, ev: object) -> None:  # noqa: N802
        ev.ignore()  # it has a place of its own: dragging it over the data is not offered


def legend_above(item: pg.PlotItem, columns: int = 4) -> LegendAbove:
    """Give `item` a legend between its title and its data area (`columns` entries a row); curves added with
    a name are listed in it, as with `addLegend`."""
    top = item.getAxis("top")
    item.layout.removeItem(top)  # the row of the top axis, which these plots never show
    top.hide()
    legend = LegendAbove(columns)
    item.layout.addItem(legend, 1, 1, alignment=Qt.AlignmentFlag.AlignHCenter)
    item.legend = legend
    return legend


def is_shown(widget: QWidget) -> bool:
    """Whether a redraw could be seen: not in a hidden tab or window, not collapsed to nothing."""
    return widget.isVisible() and widget.width() > 0 and widget.height() > 0


def decimated_for(
    plot: pg.PlotWidget, data: RingBuffer, first: int, stop: int, x_column: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Columns first..stop-1 of `data` against its (sorted) column `x_column`, decimated to what `plot`
    shows: the whole series while x auto-ranges, only the visible part (at full detail when short) once
    zoomed or panned."""
    view = plot.getPlotItem().getViewBox()
    x_range = None if view.autoRangeEnabled()[0] else tuple(view.viewRange()[0])
    return data.decimate(first, stop, x_range, max(plot.width(), MIN_BUCKETS), x_column)


def set_curves(plot: pg.PlotWidget, curves: Sequence[pg.PlotDataItem], x: np.ndarray, ys: np.ndarray) -> None:
    """`setData` of curve i with (x, ys[i]) (curves the user hid are skipped: redraw them when shown),
    then `settle_axes`: the paint that follows only draws."""
    for curve, y in zip(curves, ys):
        if curve.isVisible():
            curve.setData(x, y)
    settle_axes(plot)


def draw_decimated(
    plot: pg.PlotWidget, curves: Sequence[pg.PlotDataItem], data: RingBuffer, first: int = 1, x_column: int = 0
) -> None:
    """Give curve i column first+i of `data` against column `x_column`, decimated to what `plot` shows."""
    set_curves(plot, curves, *decimated_for(plot, data, first, first + len(curves), x_column))


def settle_axes(plot: pg.PlotWidget) -> None:
    """Move the auto-range now, and rebuild the ticks of each axis it moved, rather than in the next paint.

    pyqtgraph does both inside the paint; when the range moves that paint is the longest stretch the GUI
    thread spends without returning to the event loop (~7.5 ms of CPU for the loss plot here). Done
    here, in the redraw timer's event, it splits into this and a paint of ~2.5 ms. An axis caches its
    drawing as a QPicture until its range or size changes; painting it once into a throwaway picture
    fills that cache."""
    item = plot.getPlotItem()
    item.getViewBox().updateAutoRange()
    for name in ("bottom", "left", "top", "right"):
        axis = item.getAxis(name)
        if axis.isVisible() and axis.picture is None:
            picture = QPicture()
            painter = QPainter(picture)
            try:
                axis.paint(painter, None, None)
            finally:
                painter.end()


def arrange_legend(legend: pg.LegendItem, columns: int) -> None:
    """Lay the legend's entries out `columns` to a row, in the order they were added (a rank's lines on one
    row). pyqtgraph's own `setColumnCount` re-lays them from the grid's stale column count: a rank's lines
    ended up in a column each."""
    grid = legend.layout
    for i in range(grid.count() - 1, -1, -1):
        grid.removeAt(i)
    for i, (sample, label) in enumerate(legend.items):
        grid.addItem(sample, i // columns, 2 * (i % columns), alignment=Qt.AlignmentFlag.AlignVCenter)
        grid.addItem(label, i // columns, 2 * (i % columns) + 1)
    legend.columnCount = columns  # entries added later (an overlaid run) continue the grid
    legend.rowCount = -(-len(legend.items) // columns)
    legend.updateSize()
