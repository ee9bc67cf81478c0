"""Recorded runs laid over the live plots, to compare the run training now with earlier ones.

Each overlaid run gets one colour of its own: its smoothed loss on the loss plot (against step, at the
plot's own smoothing, so it reads like the live EMA line) and its allocated and peak memory on the memory
plot (against seconds since its start, as the live run's memory is against seconds since its own start),
dashed and dotted so they never pass for the live lines, each named in the plot's legend ("#12 resnet18
cuda:0"). The data live in ring buffers like the live curves' and are drawn the same way (peak-decimated
to the plot's width, only the visible part once zoomed), by a timer of their own at a few redraws a second
and only when something changed: a finished run is drawn once, a live run's overlay as it grows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, Slot

from gpu_train_monitor.export.smoothing import EmaState, debiased_ema
from gpu_train_monitor.gui.history.feed import SeriesArrays, has_allocator
from gpu_train_monitor.gui.plots.live_plot import decimated_for, is_shown, set_curves, settle_axes
from gpu_train_monitor.gui.plots.loss_plot import LossPlot
from gpu_train_monitor.gui.plots.memory_plot import MemoryPlot
from gpu_train_monitor.gui.plots.ring_buffer import PeakRingBuffer, RingBuffer
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.redraw import RedrawThrottle
from gpu_train_monitor.store.run_store import RunRow

REDRAW_INTERVAL_MS = 200  # overlays change at most once per store poll: 5 redraws a second are plenty
# colours no live line uses (the live loss is grey and blue; memory blue, orange, red, purple and grey)
PALETTE = (
    palette.TAB_CYAN,
    palette.TAB_OLIVE,
    palette.TAB_PINK,
    palette.TAB_BROWN,
    palette.TAB_GREEN,
    (230, 171, 2),
    (0, 128, 128),
    (120, 60, 20),
)
MIN_CAPACITY = 1024  # rows a new buffer holds before it first grows


def overlay_title(row: RunRow) -> str:
    """'#12 resnet18 cuda:0' (the run's name instead of its model once it has one)."""
    return f"#{row.id} {row.name or row.model} {row.device}"


@dataclass
class Overlay:
    """One overlaid run: its data and its curves."""

    run_id: int
    title: str
    colour: tuple[int, int, int]
    losses: PeakRingBuffer  # step, loss, smoothed loss
    memory: RingBuffer  # seconds since the run's start, allocated, peak allocated
    loss_curve: pg.PlotDataItem
    memory_curves: tuple[pg.PlotDataItem, pg.PlotDataItem]  # allocated, peak
    ema: EmaState = field(default_factory=EmaState)


def grown(buffer: RingBuffer, extra: int, make: Callable[[int], RingBuffer], columns: int = 3) -> RingBuffer:
    """`buffer`, or a copy made by `make(capacity)` with room for `extra` more rows (capacity doubling): an
    overlay keeps all of a run however long it grows, and a short run's buffers stay small."""
    need = len(buffer) + extra
    if need <= buffer.capacity:
        return buffer
    bigger = make(max(2 * buffer.capacity, need))
    bigger.extend(buffer.columns(0, columns).T)
    return bigger


class Overlays(QObject):
    """The overlaid runs on `loss_plot` and `memory_plot`; fed by whoever reads the store (the history)."""

    def __init__(self, loss_plot: LossPlot, memory_plot: MemoryPlot, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.loss_plot, self.memory_plot = loss_plot, memory_plot
        self.overlays: dict[int, Overlay] = {}
        self._dirty_loss = self._dirty_memory = False
        loss_plot.smoothing.valueChanged.connect(self._on_smoothing_changed)
        loss_plot.log_scale.toggled.connect(self._on_loss_view_changed)
        loss_plot.plot.getPlotItem().getViewBox().sigXRangeChanged.connect(self._on_loss_range_changed)
        memory_plot.plot.getPlotItem().getViewBox().sigXRangeChanged.connect(self._on_memory_range_changed)
        self.redraw = RedrawThrottle(REDRAW_INTERVAL_MS, [self.refresh], self)  # both plots' overlays at once

    # ---- which runs ------------------------------------------------------------------------------
    def ids(self) -> list[int]:
        return list(self.overlays)

    def add(self, row: RunRow) -> Overlay:
        """Overlay `row`'s run (no data yet: `extend` brings it); the colour is the first one free."""
        if row.id in self.overlays:
            return self.overlays[row.id]
        used = {overlay.colour for overlay in self.overlays.values()}
        colour = next((c for c in PALETTE if c not in used), PALETTE[len(self.overlays) % len(PALETTE)])
        title = overlay_title(row)
        loss_curve = pg.PlotDataItem(
            pen=pg.mkPen(colour, width=1, style=Qt.PenStyle.DashLine), name=title, connect="finite"
        )
        loss_curve.setToolTip(self.tr("{title}: loss smoothed as the live EMA line").format(title=title))
        self.loss_plot.plot.getPlotItem().addItem(loss_curve)
        memory_name = (
            self.tr("{title} allocated (peak dotted)")
            if has_allocator(row.device)
            else self.tr("{title} RSS (peak dotted)")
        ).format(title=title)
        memory_curves = (  # one legend entry a run: the plot's legend already lists five live lines
            pg.PlotDataItem(
                pen=pg.mkPen(colour, width=1, style=Qt.PenStyle.DashLine), name=memory_name, connect="finite"
            ),
            pg.PlotDataItem(pen=pg.mkPen(colour, width=1, style=Qt.PenStyle.DotLine), connect="finite"),
        )
        for curve in memory_curves:
            self.memory_plot.plot.getPlotItem().addItem(curve)
        capacity = max(row.total_steps, row.steps, MIN_CAPACITY)
        overlay = Overlay(
            row.id, title, colour, PeakRingBuffer(capacity, 3), RingBuffer(MIN_CAPACITY, 3), loss_curve, memory_curves
        )
        self.overlays[row.id] = overlay
        return overlay

    def remove(self, run_id: int) -> None:
        overlay = self.overlays.pop(run_id, None)
        if overlay is None:
            return
        self.loss_plot.plot.getPlotItem().removeItem(overlay.loss_curve)
        for curve in overlay.memory_curves:
            self.memory_plot.plot.getPlotItem().removeItem(curve)

    def clear(self) -> None:
        for run_id in list(self.overlays):
            self.remove(run_id)

    # ---- data in ---------------------------------------------------------------------------------
    def extend(self, run_id: int, arrays: SeriesArrays) -> None:
        """Append what a read of the run found (`gpu_train_monitor.gui.history.feed.SeriesArrays`) to its overlay."""
        overlay = self.overlays.get(run_id)
        if overlay is None:
            return
        if len(arrays.steps):
            ema = debiased_ema(arrays.losses, self.loss_plot.smoothing.value(), overlay.ema)
            overlay.losses = grown(overlay.losses, len(ema), lambda n: PeakRingBuffer(n, 3))
            overlay.losses.extend(np.column_stack([arrays.steps.astype(np.float64), arrays.losses, ema]))
            self._dirty_loss = True
        if len(arrays.memory):
            rows = arrays.memory[:, [0, 1, 3]]  # seconds since the start, allocated, peak allocated
            overlay.memory = grown(overlay.memory, len(rows), lambda n: RingBuffer(n, 3))
            overlay.memory.extend(rows)
            self._dirty_memory = True

    def reset(self, run_id: int) -> None:
        """Forget a run's data (it was resumed from a checkpoint: it comes again from the start)."""
        overlay = self.overlays.get(run_id)
        if overlay is not None:
            overlay.losses.clear()
            overlay.memory.clear()
            overlay.ema = EmaState()
            self._dirty_loss = self._dirty_memory = True

    # ---- drawing ---------------------------------------------------------------------------------
    @Slot()
    def refresh(self) -> bool:
        """Redraw the overlays of each plot whose overlays changed, if it can be seen; returns whether it drew."""
        drew = False
        if self._dirty_loss and is_shown(self.loss_plot.plot):
            self._dirty_loss = False
            log = self.loss_plot.log_scale.isChecked()
            for overlay in self.overlays.values():
                steps, series = decimated_for(self.loss_plot.plot, overlay.losses, 2, 3)  # the smoothed loss
                if log:  # as the live curves: the log of a non-positive loss is undefined, hide those points
                    series = np.where(series > 0, series, np.nan)
                overlay.loss_curve.setData(steps, series[0])
            settle_axes(self.loss_plot.plot)
            drew = True
        if self._dirty_memory and is_shown(self.memory_plot.plot):
            self._dirty_memory = False
            for overlay in self.overlays.values():
                set_curves(
                    self.memory_plot.plot,
                    overlay.memory_curves,
                    *decimated_for(self.memory_plot.plot, overlay.memory, 1, 3),
                )
            drew = True
        return drew

    @Slot(float)
    def _on_smoothing_changed(self, alpha: float) -> None:
        """Smooth every overlay's losses again with the live plot's new weight."""
        for overlay in self.overlays.values():
            steps, losses = np.array(overlay.losses.column(0)), np.array(overlay.losses.column(1))
            overlay.ema = EmaState()
            ema = debiased_ema(losses, alpha, overlay.ema)
            overlay.losses.clear()
            overlay.losses.extend(np.column_stack([steps, losses, ema]))
        self._dirty_loss = True

    @Slot()
    def _on_loss_view_changed(self, *_: object) -> None:
        self._dirty_loss = True

    @Slot()
    def _on_loss_range_changed(self, *_: object) -> None:
        if not self.loss_plot.plot.getPlotItem().getViewBox().autoRangeEnabled()[0]:
            self._dirty_loss = True  # zoomed or panned: decimate the newly visible part

    @Slot()
    def _on_memory_range_changed(self, *_: object) -> None:
        if not self.memory_plot.plot.getPlotItem().getViewBox().autoRangeEnabled()[0]:
            self._dirty_memory = True

    def stop(self) -> None:
        self.redraw.stop()
