"""The loss plot: per-step loss, an adjustable EMA, epoch boundaries, and validation accuracy per epoch.

Data goes into ring buffers as events arrive; the curves are redrawn only by `refresh()`, which the
window calls from a timer (<= 30 Hz), never per step. Peak downsampling keeps a long curve's shape.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QCheckBox, QDoubleSpinBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from gui.decimate import peak_decimate, visible_slice
from gui.ring_buffer import RingBuffer

LOSS_CAPACITY = 2_000_000  # steps kept; a 1M-point redraw is benchmarked in tests/benchmarks/gui_latency.py


class LossPlot(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data = RingBuffer(LOSS_CAPACITY, 3)  # step, loss, ema
        self._ema: float | None = None
        self._ema_raw: float | None = None
        self._ema_count = 0
        self._dirty = False
        self._epoch_lines: list[pg.InfiniteLine] = []
        self._val: list[tuple[int, float]] = []

        self.plot = pg.PlotWidget()
        item = self.plot.getPlotItem()
        item.setTitle("Training loss")
        item.setLabel("bottom", "step")
        item.setLabel("left", "loss")
        item.addLegend(offset=(-10, 10))
        self.raw_curve = item.plot(pen=pg.mkPen((150, 150, 150), width=1), name="loss per step",
                                   connect="finite")
        self.ema_curve = item.plot(pen=pg.mkPen((31, 119, 180), width=1), name="smoothed (EMA)",
                                   connect="finite")

        item.getViewBox().sigXRangeChanged.connect(self._on_x_range_changed)

        self.val_plot = pg.PlotWidget()
        vitem = self.val_plot.getPlotItem()
        vitem.setTitle("Validation accuracy")
        vitem.setLabel("bottom", "epoch")
        vitem.setLabel("left", "accuracy", units="%")
        vitem.setYRange(0, 100)
        self.val_curve = vitem.plot(pen=pg.mkPen((44, 160, 44), width=1), symbol="o", symbolSize=6,
                                    symbolBrush=(44, 160, 44))
        self.val_plot.setMinimumHeight(130)
        self.val_plot.setMaximumHeight(180)

        self.smoothing = QDoubleSpinBox()
        self.smoothing.setDecimals(3)
        self.smoothing.setRange(0.0, 0.999)
        self.smoothing.setSingleStep(0.01)
        self.smoothing.setValue(0.9)
        self.smoothing.setKeyboardTracking(False)
        self.smoothing.setToolTip("EMA weight of the past: 0 shows raw losses, 0.99 smooths heavily")
        self.smoothing.valueChanged.connect(self._on_smoothing_changed)
        self.log_scale = QCheckBox("log scale")
        self.log_scale.setToolTip("Show the loss on a logarithmic axis")
        self.log_scale.toggled.connect(self._on_log_scale_toggled)

        controls = QHBoxLayout()
        controls.addWidget(QLabel("Smoothing"))
        controls.addWidget(self.smoothing)
        controls.addWidget(self.log_scale)
        controls.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(controls)
        layout.addWidget(self.plot, 3)
        layout.addWidget(self.val_plot, 1)

    # ---- data in ---------------------------------------------------------------------------------
    def clear(self) -> None:
        self.data.clear()
        self._ema, self._ema_raw, self._ema_count = None, None, 0
        for line in self._epoch_lines:
            self.plot.removeItem(line)
        self._epoch_lines.clear()
        self._val.clear()
        self.val_curve.setData([], [])
        self._dirty = True

    def add_losses(self, first_step: int, losses: tuple[float, ...]) -> None:
        alpha = self.smoothing.value()
        rows = np.empty((len(losses), 3))
        for i, loss in enumerate(losses):
            rows[i, 0] = first_step + i
            rows[i, 1] = loss
            rows[i, 2] = self._next_ema(loss, alpha)
        self.data.extend(rows)
        self._dirty = True

    def _next_ema(self, loss: float, alpha: float) -> float:
        """Bias-corrected EMA (like TensorBoard's smoothing); non-finite losses are skipped."""
        if not math.isfinite(loss):
            return self._ema if self._ema is not None else float("nan")
        self._ema_count += 1
        raw = alpha * (self._ema_raw or 0.0) + (1 - alpha) * loss
        self._ema_raw = raw
        self._ema = raw / (1 - alpha ** self._ema_count) if alpha > 0 else raw
        return self._ema

    def add_epoch_end(self, epoch: int, step: int, val_accuracy: float | None) -> None:
        line = pg.InfiniteLine(pos=step, angle=90, pen=pg.mkPen((120, 120, 120), width=1, style=Qt.PenStyle.DashLine),
                               label=f"epoch {epoch}", labelOpts={"position": 0.95, "color": (90, 90, 90)})
        self.plot.addItem(line)
        self._epoch_lines.append(line)
        if val_accuracy is not None:
            self._val.append((epoch, 100.0 * val_accuracy))
            xs, ys = zip(*self._val)
            self.val_curve.setData(list(xs), list(ys))

    # ---- drawing ---------------------------------------------------------------------------------
    def refresh(self) -> bool:
        """Redraw if new data arrived since the last call. Returns whether it drew."""
        if not self._dirty:
            return False
        self._dirty = False
        steps = self.data.column(0)
        view = self.plot.getPlotItem().getViewBox()
        # while auto-ranging the whole series is visible; once zoomed, only the visible part is drawn
        x_range = None if view.autoRangeEnabled()[0] else tuple(view.viewRange()[0])
        part = visible_slice(steps, x_range)
        buckets = max(self.plot.width(), 200)
        steps_d, losses = peak_decimate(steps[part], self.data.column(1)[part], buckets)
        _, ema = peak_decimate(steps[part], self.data.column(2)[part], buckets)
        steps = steps_d
        if self.log_scale.isChecked():  # log of a non-positive loss is undefined: hide those points
            losses = np.where(losses > 0, losses, np.nan)
            ema = np.where(ema > 0, ema, np.nan)
        self.raw_curve.setData(steps, losses)
        self.ema_curve.setData(steps, ema)
        return True

    @Slot()
    def _on_x_range_changed(self, *_: object) -> None:
        if not self.plot.getPlotItem().getViewBox().autoRangeEnabled()[0]:
            self._dirty = True  # zoomed or panned: decimate the newly visible part

    @Slot(float)
    def _on_smoothing_changed(self, alpha: float) -> None:
        """Recompute the EMA over the kept history with the new weight."""
        losses = self.data.column(1)
        steps = self.data.column(0)
        self._ema = self._ema_raw = None
        self._ema_count = 0
        ema = np.array([self._next_ema(float(x), alpha) for x in losses])
        self.data.clear()
        self.data.extend(np.column_stack([steps, losses, ema]) if len(ema) else np.empty((0, 3)))
        self._dirty = True

    @Slot(bool)
    def _on_log_scale_toggled(self, on: bool) -> None:
        self.plot.getPlotItem().setLogMode(y=on)
        self._dirty = True
