"""One training step's memory over time: the bytes live after each allocation and free of the step, stacked by what
holds them (parameters at the bottom, temporaries on top), or the area under the total coloured by the block of the
model running then; dashed lines where each phase ended and where the step peaked; the point under the mouse read
out below (its phase, its block and its bytes by holder).

A timeline holds at most a few thousand points (merged where the step made more, keeping the peak and the phase
ends), so it is drawn whole: six filled areas, or one bar per point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.events.module_bytes import OUTSIDE
from gpu_train_monitor.events.step_timeline import StepTimeline, TimelinePoint
from gpu_train_monitor.gui.plots.live_plot import legend_above, settle_axes
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.locale_format import integer

Colour = tuple[int, int, int]
# the blocks coloured apart, in the order they first run; the rest share one colour
MODULE_COLOURS: tuple[Colour, ...] = (
    palette.TAB_BLUE,
    palette.TAB_ORANGE,
    palette.TAB_GREEN,
    palette.TAB_RED,
    palette.TAB_PURPLE,
    palette.TAB_BROWN,
    palette.TAB_PINK,
    palette.TAB_OLIVE,
    palette.TAB_CYAN,
)
OTHER_COLOUR: Colour = (127, 127, 127)  # blocks past MODULE_COLOURS
OUTSIDE_COLOUR: Colour = (199, 199, 199)  # the batch, the loss, the optimizer: no block of the model
LEGEND_COLUMNS = 6


class StepTimelinePlot(QWidget):
    """`set_timeline(t)` draws it; `set_by_module(on)` switches the colouring. `holders`: (HOLDERS key, name, colour)
    bottom to top; `phase_name`: a phase as the window says it."""

    def __init__(
        self,
        holders: Sequence[tuple[str, str, Colour]],
        phase_name: Callable[[str], str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.holders = list(holders)
        self.phase_name = phase_name
        self.timeline = StepTimeline()
        self.by_module = False
        self._x = np.zeros(0)
        self._modules: list[str] = []  # the blocks coloured apart, in the order they first run
        self.plot = pg.PlotWidget()
        self.plot.setMinimumHeight(260)
        item = self.plot.getPlotItem()
        item.setMenuEnabled(False)
        item.setMouseEnabled(x=True, y=False)  # the wheel and a drag zoom the step; the bytes axis fits
        item.enableAutoRange(y=True)
        item.setAutoVisible(y=True)
        self.legend = legend_above(item, LEGEND_COLUMNS)
        self._drawn: list[pg.GraphicsObject] = []  # what the current colouring drew (areas or bars)
        self._lines: list[pg.InfiniteLine] = []  # phase ends and the peak
        self.readout = QLabel()
        self.readout.setWordWrap(True)
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.readout)
        self.set_names(self.holders)

    def set_names(self, holders: Sequence[tuple[str, str, Colour]]) -> None:
        """The holders' names (after a language change) and the axes' texts; the timeline drawn again."""
        self.holders = list(holders)
        item = self.plot.getPlotItem()
        item.setLabel("bottom", self.tr("allocations and frees of the step, in order"))
        item.setLabel("left", self.tr("live"), units="B")  # SI prefixes: kB, MB, GB on the axis
        self._draw()

    def set_timeline(self, timeline: StepTimeline) -> None:
        self.timeline = timeline
        self._x = np.asarray([p.index for p in timeline.points], dtype=np.float64)
        self._modules = _coloured_modules(timeline.points)
        self.plot.getPlotItem().setLimits(xMin=-1, xMax=max(float(self._x[-1]) + 1, 4) if len(self._x) else 4)
        self.plot.getPlotItem().enableAutoRange()
        self._draw()

    def set_by_module(self, on: bool) -> None:
        self.by_module = on
        self._draw()

    def module_colour(self, module: str) -> Colour:
        if module == OUTSIDE:
            return OUTSIDE_COLOUR
        if module in self._modules:
            return MODULE_COLOURS[self._modules.index(module)]
        return OTHER_COLOUR

    def _draw(self) -> None:
        item = self.plot.getPlotItem()
        for drawn in self._drawn + self._lines:
            item.removeItem(drawn)
        self._drawn, self._lines = [], []
        self.legend.clear()
        points = self.timeline.points
        if not points:
            self.readout.setText("")
            return
        if self.by_module:
            self._draw_modules(item, points)
        else:
            self._draw_holders(item, points)
        self._mark_phases(item)
        settle_axes(self.plot)
        self.readout.setText(self.tr("Point at the step to read its bytes; wheel or drag to zoom."))

    def _draw_holders(self, item: pg.PlotItem, points: Sequence[TimelinePoint]) -> None:
        # the floor: a curve with no pen draws no path, and a fill needs one on both sides
        below = pg.PlotDataItem(self._x, np.zeros(len(points)), pen=pg.mkPen(0, 0, 0, 0))
        self._add(item, below)
        running = np.zeros(len(points))
        for key, name, colour in self.holders:
            running = running + np.asarray([getattr(p, key) for p in points], dtype=np.float64)
            above = pg.PlotDataItem(self._x, running, pen=pg.mkPen(colour, width=1))
            self._add(item, above)
            self._add(item, pg.FillBetweenItem(below, above, brush=pg.mkBrush(*colour, 150)))
            self.legend.addItem(_swatch(colour), name)
            below = above

    def _draw_modules(self, item: pg.PlotItem, points: Sequence[TimelinePoint]) -> None:
        widths = np.diff(self._x, append=self._x[-1] + 1)
        brushes = [pg.mkBrush(*self.module_colour(p.module), 190) for p in points]
        totals = np.asarray([p.total_bytes for p in points], dtype=np.float64)
        self._add(item, pg.BarGraphItem(x0=self._x, width=widths, height=totals, brushes=brushes, pen=None))
        for module in self._modules:
            self.legend.addItem(_swatch(self.module_colour(module)), module)
        others = {p.module for p in points} - set(self._modules) - {OUTSIDE}
        if others:
            self.legend.addItem(_swatch(OTHER_COLOUR), self.tr("{count} other blocks").format(count=len(others)))
        if any(p.module == OUTSIDE for p in points):
            self.legend.addItem(_swatch(OUTSIDE_COLOUR), self.tr("outside modules"))

    def _mark_phases(self, item: pg.PlotItem) -> None:
        ends = self.timeline.phase_ends()
        for row, (phase, point) in enumerate(ends):  # a row each: phases that end together stay readable
            text = self.tr("{phase} ends").format(phase=self.phase_name(phase))
            self._line(item, point.index, text, 0.97 - 0.07 * row, palette.AXIS_GREY)
        peak = self.timeline.peak
        if peak is not None:
            text = self.tr("peak {size}").format(size=format_bytes(peak.total_bytes))
            self._line(item, peak.index, text, 0.95 - 0.07 * len(ends), palette.TAB_RED)

    def _line(self, item: pg.PlotItem, x: float, text: str, height: float, colour: object) -> None:
        line = pg.InfiniteLine(
            pos=x,
            angle=90,
            movable=False,
            pen=pg.mkPen(colour, width=1, style=Qt.PenStyle.DashLine),
            label=text,
            labelOpts={"position": height, "color": colour, "anchors": [(1, 0), (1, 0)]},
        )
        item.addItem(line, ignoreBounds=True)
        self._lines.append(line)

    def _add(self, item: pg.PlotItem, drawn: pg.GraphicsObject) -> None:
        item.addItem(drawn)
        self._drawn.append(drawn)

    def point_at(self, x: float) -> TimelinePoint | None:
        """The point in force at `x` (the last one at or before it)."""
        if not len(self._x) or x < self._x[0] - 0.5:
            return None
        at = int(np.searchsorted(self._x, x + 0.5, side="right")) - 1
        return self.timeline.points[max(at, 0)]

    def read_out(self, point: TimelinePoint) -> str:
        """What the step held after `point`: where it was (its event, phase and block) and its bytes by holder."""
        module = self.tr("outside modules") if point.module == OUTSIDE else point.module
        parts = self.tr(", ").join(
            self.tr("{name} {size}").format(name=name, size=format_bytes(getattr(point, key)))
            for key, name, _ in self.holders
        )
        return self.tr("After allocation or free {event} ({phase}, {module}): {total} live: {parts}").format(
            event=integer(point.index),
            phase=self.phase_name(point.phase),
            module=module,
            total=format_bytes(point.total_bytes),
            parts=parts,
        )

    @Slot(object)
    def _on_mouse_moved(self, position: object) -> None:
        view = self.plot.getPlotItem().getViewBox()
        if not self.timeline.points or not view.sceneBoundingRect().contains(position):
            return
        point = self.point_at(view.mapSceneToView(position).x())
        if point is not None:
            self.readout.setText(self.read_out(point))


def _coloured_modules(points: Sequence[TimelinePoint]) -> list[str]:
    """The blocks given a colour of their own: those that run longest (most points), in the order they first run."""
    counts: dict[str, int] = {}
    for point in points:
        if point.module != OUTSIDE:
            counts[point.module] = counts.get(point.module, 0) + 1
    longest = set(sorted(counts, key=lambda module: counts[module], reverse=True)[: len(MODULE_COLOURS)])
    return [module for module in counts if module in longest]


def _swatch(colour: Colour) -> pg.BarGraphItem:
    """A legend entry's sample: a filled square of `colour`."""
    return pg.BarGraphItem(x=[], height=[], width=1, brush=pg.mkBrush(*colour), pen=pg.mkPen(colour))
