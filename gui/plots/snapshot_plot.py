"""A memory snapshot's active-memory timeline: live allocations and reserved bytes after each allocator event.

A snapshot holds up to millions of events; pyqtgraph drawing them all costs tens of ms per frame. Each redraw
cuts the visible range and peak-decimates it to about two points per pixel column (`decimate_visible`, as the
loss plot does), so a zoom or pan at any scale redraws a few thousand points: under 50 ms for 1,000,000 events
(tests/benchmarks/snapshot_viewer.py). A zoom or pan asks for a redraw in the next pass of the event loop, so a
drag that moves the range many times redraws once per pass.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.gui.plots.decimate import decimate_visible
from gpu_train_monitor.gui.plots.live_plot import MIN_BUCKETS, legend_above, settle_axes
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.locale_format import integer


class SnapshotTimelinePlot(QWidget):
    """Live and reserved bytes against the event number; a dashed line marks the peak."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._x = np.zeros(0)
        self._ys = np.zeros((2, 0))
        self.plot = pg.PlotWidget()
        item = self.plot.getPlotItem()
        item.setTitle(self.tr("Active memory over the trace"))
        item.setLabel("bottom", self.tr("allocator event"))
        item.setLabel("left", self.tr("memory"), units="B")  # SI prefixes: kB, MB, GB on the axis
        item.setMenuEnabled(False)
        # the wheel and a drag zoom and pan the events; the bytes axis always fits what is visible
        item.setMouseEnabled(x=True, y=False)
        item.enableAutoRange(y=True)
        item.setAutoVisible(y=True)
        legend_above(item, 2)
        self.live_curve = item.plot(pen=pg.mkPen(palette.TAB_BLUE, width=1), name=self.tr("live allocations"))
        self.reserved_curve = item.plot(pen=pg.mkPen(palette.TAB_ORANGE, width=1), name=self.tr("reserved"))
        self.peak_line = pg.InfiniteLine(
            angle=90,
            movable=False,
            pen=pg.mkPen(palette.TAB_RED, width=1, style=Qt.PenStyle.DashLine),
            label="",
            labelOpts={"position": 0.92, "color": palette.TAB_RED, "anchors": [(0, 1), (0, 1)]},
        )
        self.peak_line.hide()
        item.addItem(self.peak_line, ignoreBounds=True)
        # the life of the allocation picked in the table, from its alloc to its free
        self.lifetime = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(*palette.TAB_GREEN, 50))
        self.lifetime.hide()
        item.addItem(self.lifetime, ignoreBounds=True)
        self._pending = QTimer(self)
        self._pending.setSingleShot(True)
        self._pending.setInterval(0)
        self._pending.timeout.connect(self.redraw)
        item.getViewBox().sigXRangeChanged.connect(self._on_x_range_changed)
        self.readout = QLabel()  # the bytes at the event under the mouse
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.readout)

    def set_timeline(self, live_bytes: np.ndarray, reserved_bytes: np.ndarray, peak_event: int) -> None:
        """Show a snapshot's timelines (one value per event) and its peak, zoomed out to the whole trace."""
        self._x = np.arange(len(live_bytes), dtype=np.float64)
        self._ys = np.vstack([live_bytes, reserved_bytes]).astype(np.float64)
        if peak_event >= 0:
            self.peak_line.setPos(peak_event)
            self.peak_line.show()  # first: a hidden line's label ignores a new text
            self.peak_line.label.setFormat(
                self.tr("peak {size}").format(size=format_bytes(int(live_bytes[peak_event])))
            )
        else:
            self.peak_line.hide()
        self.lifetime.hide()
        self.readout.setText(self.tr("Point at the timeline to read its bytes; wheel or drag to zoom and pan."))
        item = self.plot.getPlotItem()
        item.setLimits(xMin=-1, xMax=max(len(live_bytes), 1), minXRange=4)  # no panning off the trace
        item.enableAutoRange()
        self.redraw()

    def show_lifetime(self, first: int | None, last: int | None) -> None:
        """Shade events `first` to `last` (None: from the trace's start, to its end); hide it with `first` and `last`
        both None and nothing to show."""
        if len(self._x) == 0:
            self.lifetime.hide()
            return
        end = len(self._x) - 1
        self.lifetime.setRegion((0 if first is None else first, end if last is None else last))
        self.lifetime.show()

    def visible_range(self) -> tuple[float, float] | None:
        """The x range drawn in full detail (None: the whole trace, while x follows the data)."""
        view = self.plot.getPlotItem().getViewBox()
        return None if view.autoRangeEnabled()[0] else tuple(view.viewRange()[0])

    @Slot()
    def redraw(self) -> None:
        """Decimate what is visible to the plot's width and draw it."""
        if len(self._x) == 0:
            self.live_curve.setData([], [])
            self.reserved_curve.setData([], [])
            return
        x, ys = decimate_visible(self._x, self._ys, self.visible_range(), max(self.plot.width(), MIN_BUCKETS))
        self.live_curve.setData(x, ys[0])
        self.reserved_curve.setData(x, ys[1])
        settle_axes(self.plot)

    def points_drawn(self) -> int:
        """How many points the live curve holds now (a few per pixel column, whatever the trace's length)."""
        data = self.live_curve.getData()[0]
        return 0 if data is None else len(data)

    def read_out(self, event: int) -> str:
        """What happened by `event`: its live and reserved bytes."""
        return self.tr("after event {event}: {live} live, {reserved} reserved").format(
            event=integer(event), live=format_bytes(self._ys[0, event]), reserved=format_bytes(self._ys[1, event])
        )

    @Slot(object)
    def _on_mouse_moved(self, position: object) -> None:
        view = self.plot.getPlotItem().getViewBox()
        if len(self._x) == 0 or not view.sceneBoundingRect().contains(position):
            return
        event = int(round(view.mapSceneToView(position).x()))
        if 0 <= event < len(self._x):
            self.readout.setText(self.read_out(event))

    @Slot()
    def _on_x_range_changed(self, *_: object) -> None:
        if self.visible_range() is not None:  # zoomed or panned: decimate the newly visible part
            self._pending.start()
