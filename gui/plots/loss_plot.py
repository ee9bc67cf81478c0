"""The loss plot: per-step loss, an adjustable EMA, epoch boundaries, and validation accuracy per epoch.

Data goes into ring buffers as events arrive; the curves are redrawn only by `refresh()`, which the
window calls from a timer (<= 30 Hz), never per step, and not while the plot is hidden. Peak
downsampling keeps a long curve's shape; the auto-range holds still between growths of the data
(`gpu_train_monitor.gui.plots.live_plot`), so a redraw repaints the curves without rebuilding the axes.
Epoch markers: one per epoch at its real end (an epoch cut short by the run's step limit gets none; a resume
that finishes it moves its marker), labelled inside the plot's top edge, every k-th label only when the
labels would overlap at the plot's width (k from their pixel spacing).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QCheckBox, QDoubleSpinBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from gpu_train_monitor.export.smoothing import DEFAULT_SMOOTHING, EmaState, debiased_ema
from gpu_train_monitor.gui.plots.live_plot import decimated_for, is_shown, legend_above, live_plot_widget, set_curves
from gpu_train_monitor.gui.plots.ring_buffer import PeakRingBuffer
from gpu_train_monitor.gui.qt import palette

LOSS_CAPACITY = 2_000_000  # steps kept; a 1M-point redraw is benchmarked in tests/benchmarks/gui_latency.py
LABEL_GAP_PX = 10  # free pixels between two epoch labels
NICE_STRIDES = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)  # every k-th epoch labelled: epochs 5, 10, 15 read well
RIGHT_OF_LINE = [(0, 0), (0, 0)]  # an epoch label's text anchors: hanging from the top edge, right of its line
LEFT_OF_LINE = [(1, 0), (1, 0)]  # ... left of it: the last epoch at the right edge


class LossPlot(QWidget):
    def __init__(self, parent: QWidget | None = None, capacity: int = LOSS_CAPACITY) -> None:
        """`capacity`: steps kept (a recorded run's view sizes it to the run: the buffer is allocated whole)."""
        super().__init__(parent)
        self.data = PeakRingBuffer(capacity, 3)  # step, loss, ema; min/max blocks of loss and ema
        self._ema = EmaState()
        self._dirty = False
        self._epoch_lines: list[pg.InfiniteLine] = []  # in epoch order
        self._epoch_of_line: dict[int, pg.InfiniteLine] = {}  # epoch -> its marker
        self._val: list[tuple[int, float]] = []

        self.plot = live_plot_widget()
        item = self.plot.getPlotItem()
        item.setTitle(self.tr("Training loss"))
        item.setLabel("bottom", self.tr("step"))
        item.setLabel("left", self.tr("loss"))
        for side in ("bottom", "left"):  # plain numbers: a loss of 0.70-0.76 read "700-760 (x0.001)"
            item.getAxis(side).enableAutoSIPrefix(False)
        self.legend = legend_above(item, 4)  # a row above the data: no curve or epoch label passes under it
        self.raw_curve = item.plot(
            pen=pg.mkPen((150, 150, 150), width=1), name=self.tr("loss per step"), connect="finite"
        )
        self.ema_curve = item.plot(
            pen=pg.mkPen(palette.TAB_BLUE, width=1), name=self.tr("smoothed (EMA)"), connect="finite"
        )

        item.getViewBox().sigXRangeChanged.connect(self._on_x_range_changed)
        item.getViewBox().sigResized.connect(self.thin_epoch_labels)
        self.plot.setMinimumHeight(120)  # title, legend, axis and an epoch label over a readable curve

        self.val_plot = pg.PlotWidget()
        vitem = self.val_plot.getPlotItem()
        vitem.setTitle(self.tr("Validation accuracy"))
        vitem.setLabel("bottom", self.tr("epoch"))
        vitem.setLabel("left", self.tr("accuracy"), units="%")
        vitem.setYRange(0, 100)
        vitem.getAxis("left").setTicks([[(0, "0"), (50, "50"), (100, "100")], []])  # readable however short
        self.val_curve = vitem.plot(
            pen=pg.mkPen(palette.TAB_GREEN, width=1), symbol="o", symbolSize=6, symbolBrush=palette.TAB_GREEN
        )
        self.val_plot.setMinimumHeight(100)
        self.val_plot.setMaximumHeight(180)

        self.smoothing = QDoubleSpinBox()
        self.smoothing.setDecimals(3)
        self.smoothing.setRange(0.0, 0.999)
        self.smoothing.setSingleStep(0.01)
        self.smoothing.setValue(DEFAULT_SMOOTHING)
        self.smoothing.setKeyboardTracking(False)
        self.smoothing.setToolTip(self.tr("EMA weight of the past: 0 shows raw losses, 0.99 smooths heavily"))
        self.smoothing.valueChanged.connect(self._on_smoothing_changed)
        self.log_scale = QCheckBox(self.tr("log scale"))
        self.log_scale.setToolTip(self.tr("Show the loss on a logarithmic axis"))
        self.log_scale.toggled.connect(self._on_log_scale_toggled)

        controls = QHBoxLayout()
        controls.addWidget(QLabel(self.tr("Smoothing")))
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
        self._ema = EmaState()
        for line in self._epoch_lines:
            self.plot.removeItem(line)
        self._epoch_lines.clear()
        self._epoch_of_line.clear()
        self._val.clear()
        self.val_curve.setData([], [])
        self._dirty = True

    def add_losses(self, first_step: int, losses: tuple[float, ...]) -> None:
        """A report's losses: stored with their steps and the bias-corrected EMA (non-finite ones skipped)."""
        values = np.asarray(losses, dtype=np.float64)
        ema = debiased_ema(values, self.smoothing.value(), self._ema)
        self.data.extend(np.column_stack([first_step + np.arange(len(values)), values, ema]))
        self._dirty = True

    def add_epoch_end(self, epoch: int, step: int, val_accuracy: float | None, complete: bool = True) -> None:
        """An epoch's end (`complete`: its data ran out; False: the run's steps ended inside it, no marker).
        An epoch seen again (a resume that finishes it) moves its marker and replaces its accuracy."""
        if complete:
            line = self._epoch_of_line.get(epoch)
            if line is None:
                line = pg.InfiniteLine(
                    pos=step,
                    angle=90,
                    pen=pg.mkPen((120, 120, 120), width=1, style=Qt.PenStyle.DashLine),
                    label=self.tr("epoch {epoch}").format(epoch=epoch),
                    labelOpts={"position": 1.0, "anchors": RIGHT_OF_LINE, "color": palette.AXIS_GREY},
                )
                self.plot.addItem(line)  # text hangs from the top edge, right of its line: never cut off
                self._epoch_of_line[epoch] = line
                self._epoch_lines = [self._epoch_of_line[e] for e in sorted(self._epoch_of_line)]
            else:
                line.setPos(step)
            self.thin_epoch_labels()
        if val_accuracy is not None:
            self._val = sorted([v for v in self._val if v[0] != epoch] + [(epoch, 100.0 * val_accuracy)])
            xs, ys = zip(*self._val)
            self.val_curve.setData(list(xs), list(ys))

    def epoch_label_stride(self) -> int:
        """k: every k-th epoch's label shows (epochs k, 2k, ...), the smallest nice k whose labels do not
        overlap at the markers' closest pixel spacing."""
        if len(self._epoch_lines) < 2:
            return 1
        steps_per_px = self.plot.getPlotItem().getViewBox().viewPixelSize()[0]
        positions = np.array([line.value() for line in self._epoch_lines], dtype=float)
        closest = float(np.min(np.diff(positions))) / steps_per_px if steps_per_px > 0 else math.inf
        widest = max(line.label.textItem.boundingRect().width() for line in self._epoch_lines) + LABEL_GAP_PX
        needed = math.ceil(widest / closest) if closest > 0 else NICE_STRIDES[-1]
        return next((k for k in NICE_STRIDES if k >= needed), NICE_STRIDES[-1])

    @Slot()
    def thin_epoch_labels(self, *_: object) -> None:
        """Show every k-th epoch's label (`epoch_label_stride`); the dashed lines all stay. A label that would
        run past the right edge goes left of its line, and the label before it steps aside if they would meet."""
        stride = self.epoch_label_stride()
        view = self.plot.getPlotItem().getViewBox()
        right_edge, steps_per_px = view.viewRange()[0][1], view.viewPixelSize()[0]
        previous: pg.InfiniteLine | None = None
        for epoch, line in sorted(self._epoch_of_line.items()):
            label = line.label
            shown = stride == 1 or epoch % stride == 0
            width = (label.textItem.boundingRect().width() + LABEL_GAP_PX) * steps_per_px
            anchors = LEFT_OF_LINE if shown and line.value() + width > right_edge else RIGHT_OF_LINE
            if anchors is LEFT_OF_LINE and previous is not None and previous.value() + 2 * width > line.value():
                previous.label.setVisible(False)
            if label.anchors != anchors:
                label.anchors = anchors
                label.updatePosition()
            if label.isVisible() != shown:
                label.setVisible(shown)
            previous = line if shown else previous

    # ---- drawing ---------------------------------------------------------------------------------
    def refresh(self) -> bool:
        """Redraw if new data arrived since the last call and the plot can be seen. Returns whether it drew."""
        if not self._dirty or not is_shown(self.plot):
            return False  # a hidden plot stays dirty: it is drawn once shown
        self._dirty = False
        steps, series = decimated_for(self.plot, self.data, 1, 3)  # loss and EMA against steps
        if self.log_scale.isChecked():  # log of a non-positive loss is undefined: hide those points
            series = np.where(series > 0, series, np.nan)
        set_curves(self.plot, (self.raw_curve, self.ema_curve), steps, series)
        self.thin_epoch_labels()  # the range may have grown: labels closer together
        return True

    @Slot()
    def _on_x_range_changed(self, *_: object) -> None:
        self.thin_epoch_labels()  # zoomed in, the labels have room again
        if not self.plot.getPlotItem().getViewBox().autoRangeEnabled()[0]:
            self._dirty = True  # zoomed or panned: decimate the newly visible part

    @Slot(float)
    def _on_smoothing_changed(self, alpha: float) -> None:
        """Recompute the EMA over the kept history with the new weight."""
        steps, losses = np.array(self.data.column(0)), np.array(self.data.column(1))
        self._ema = EmaState()
        ema = debiased_ema(losses, alpha, self._ema)
        self.data.clear()
        self.data.extend(np.column_stack([steps, losses, ema]))
        self._dirty = True

    @Slot(bool)
    def _on_log_scale_toggled(self, on: bool) -> None:
        self.plot.getPlotItem().setLogMode(y=on)
        self._dirty = True
