"""The batch-size finder in the window: capacity and margin, a Find button, each trial's peak plotted
against the batch size with the fitted line and the limit, and a button that uses the answer. The search runs on
the machine the form's device is on: here, or on a connected machine (gpu_train_monitor.remote.client.jobs: the same
trials and answer, measured there)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QDoubleSpinBox, QHBoxLayout, QLabel, QPushButton, QSpinBox, QVBoxLayout, QWidget

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.gui.launch.remote_command import RemoteMachine
from gpu_train_monitor.gui.plots.live_plot import legend_above
from gpu_train_monitor.gui.qt.background import BackgroundTask
from gpu_train_monitor.gui.qt.core_text import core_text, error_text
from gpu_train_monitor.gui.qt.locale_format import integer


class FinderPanel(QWidget):
    """Runs gpu_train_monitor.finder.search.find_batch_size in a background thread for the form's current config."""

    use_batch_size = Signal(int)
    log = Signal(str, str)  # text, level

    def __init__(self, config_source: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.config_source = config_source  # callable returning the form's RunConfig (may raise UserError)
        self.machine_source: Callable[[], RemoteMachine | None] = lambda: None  # where the form's device is
        self.task = BackgroundTask(self)
        self.task.progress.connect(self._on_trial)
        self.task.done.connect(self._on_done)
        self.task.failed.connect(self._on_failed)
        self.task.ended.connect(self._on_ended)
        self.trials: list[Any] = []
        self.result: Any = None
        self._failure: list[BaseException] = []  # the search's UserError, kept whole (its text translates)

        self.capacity = QDoubleSpinBox()
        self.capacity.setDecimals(2)
        self.capacity.setRange(0.0, 100_000.0)
        self.capacity.setSpecialValueText(self.tr("device's"))
        self.capacity.setSuffix(" GB")
        self.capacity.setToolTip(
            self.tr(
                "Memory to plan for. Leave at \"device's\" to use the selected device's; "
                "set it to plan for a GPU you do not have (e.g. 24 GB). On the CPU the "
                "default is the memory available now."
            )
        )
        self.margin = QDoubleSpinBox()
        self.margin.setDecimals(2)
        self.margin.setRange(0.0, 0.9)
        self.margin.setSingleStep(0.05)
        self.margin.setValue(0.1)
        self.margin.setToolTip(self.tr("Fraction of the capacity kept free for fragmentation and other processes"))
        self.start_batch = QSpinBox()
        self.start_batch.setRange(1, 65536)
        self.start_batch.setValue(1)
        self.start_batch.setToolTip(self.tr("First batch size tried; the search doubles from here"))
        self.find_button = QPushButton(self.tr("Find batch size"))
        self.find_button.setToolTip(
            self.tr(
                "Predict the largest batch that fits without using memory, then confirm it with at most 3 "
                "real training trials with the settings on the left (where a step cannot be predicted: a few "
                "real steps per candidate, doubling, then binary search)"
            )
        )
        self.find_button.clicked.connect(self._on_find)
        self.stop_button = QPushButton(self.tr("Stop search"))
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.task.cancel)
        self.use_button = QPushButton(self.tr("Use this batch size"))
        self.use_button.setEnabled(False)
        self.use_button.clicked.connect(self._on_use)

        controls = QHBoxLayout()
        for label, widget in (
            (self.tr("Capacity"), self.capacity),
            (self.tr("Margin"), self.margin),
            (self.tr("Start at"), self.start_batch),
        ):
            controls.addWidget(QLabel(label))
            controls.addWidget(widget)
        controls.addWidget(self.find_button)
        controls.addWidget(self.stop_button)
        controls.addStretch(1)
        self.result_label = QLabel(
            self.tr("Finds the largest batch whose training peak stays under capacity × (1 − margin).")
        )
        self.result_label.setWordWrap(True)

        self.plot = pg.PlotWidget()
        item = self.plot.getPlotItem()
        item.setLabel("bottom", self.tr("batch size"))
        item.setLabel("left", self.tr("peak memory"), units="B")
        item.showGrid(x=True, y=True, alpha=0.2)
        legend_above(item, 4)  # a row above the trials, never cut off by the plot's edge nor over a point
        self.plot.setMinimumHeight(125)  # room for the axis title "peak memory" whole (the window fits a 768 px screen)
        self.fit_scatter = item.plot(pen=None, symbol="o", symbolBrush=(44, 160, 44), name=self.tr("fits"))
        self.fail_scatter = item.plot(
            pen=None, symbol="x", symbolBrush=(214, 39, 40), symbolPen=(214, 39, 40), name=self.tr("too big")
        )
        self.fit_line = item.plot(pen=pg.mkPen((31, 119, 180), width=1), name=self.tr("fit"))
        self.predicted_scatter = item.plot(
            pen=None, symbol="o", symbolBrush=None, symbolPen=(127, 127, 127), name=self.tr("predicted")
        )  # each trial's peak as predicted before it ran: hollow, beside the measured one
        self.limit_line = pg.InfiniteLine(
            angle=0,
            pen=pg.mkPen((200, 0, 0), width=1, style=Qt.PenStyle.DashLine),
            label=self.tr("limit"),
            labelOpts={"position": 0.01, "anchors": [(0, 1), (0, 1)]},
        )  # text inside
        self.limit_line.hide()
        item.addItem(self.limit_line)

        result_row = QHBoxLayout()
        result_row.addWidget(self.result_label, 1)
        result_row.addWidget(self.use_button)
        layout = QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addLayout(result_row)
        layout.addWidget(self.plot, 1)

    @property
    def running(self) -> bool:
        return self.task.running

    @Slot()
    def _on_find(self) -> None:
        from gpu_train_monitor.base.errors import UserError

        try:
            config: RunConfig = self.config_source()
        except UserError as exc:
            self.result_label.setText(self.tr("Fix the settings first: {error}").format(error=error_text(exc)))
            return
        self.start_search(config)

    def start_search(self, config: RunConfig) -> None:
        from gpu_train_monitor.base.errors import UserError

        capacity = int(self.capacity.value() * 1e9) or None
        margin, start = self.margin.value(), self.start_batch.value()
        self.trials, self.result = [], None
        failure: list[BaseException] = []
        self._failure = failure
        machine = self.machine_source()

        def search(progress: Any, cancelled: Any) -> Any:
            options = {"capacity": capacity, "margin": margin, "start": start, "on_trial": progress}
            try:
                if machine is not None:
                    from gpu_train_monitor.remote.client.jobs import remote_find_batch_size

                    return remote_find_batch_size(machine.target(), config, should_stop=cancelled, **options)
                from gpu_train_monitor.finder.search import find_batch_size

                return find_batch_size(config, should_stop=cancelled, **options)
            except UserError as exc:  # the task passes on its English text; the panel shows it translated
                failure.append(exc)
                raise

        self._redraw()
        self.find_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.use_button.setEnabled(False)
        device = (
            config.device
            if machine is None
            else self.tr("{device} on {host}").format(device=config.device, host=machine.host)
        )
        self.result_label.setText(
            self.tr("Searching with {model} on {device}…").format(model=config.model, device=device)
        )
        self.task.start(search)
        # after start: the window re-enables Find on this signal unless a search is running
        self.log.emit(
            self.tr("batch-size search started: {model} on {device}").format(model=config.model, device=device), "info"
        )

    @Slot(object)
    def _on_trial(self, trial: Any) -> None:
        self.trials.append(trial)
        self.result_label.setText(self._trial_text(trial))
        self._redraw()

    def _trial_text(self, trial: Any) -> str:
        """'batch 64: peak 1.20 GB, fits', or why it did not; with the peak predicted before the trial."""
        batch = integer(trial.batch_size)
        predicted = getattr(trial, "predicted_bytes", None)
        if trial.peak_bytes is None:
            text = self.tr("batch {batch}: out of memory, too big").format(batch=batch)
        elif trial.fits:
            text = self.tr("batch {batch}: peak {peak}, fits").format(batch=batch, peak=format_bytes(trial.peak_bytes))
        else:
            text = self.tr("batch {batch}: peak {peak}, too big").format(
                batch=batch, peak=format_bytes(trial.peak_bytes)
            )
        if predicted is None:
            return text
        return self.tr("{trial} (predicted {predicted})").format(trial=text, predicted=format_bytes(predicted))

    @Slot(object)
    def _on_done(self, result: Any) -> None:
        self.result = result
        self.trials = list(result.trials)
        batch = integer(result.batch_size)
        self.result_label.setText(
            self.tr(
                "Largest batch that fits: {batch} (predicted peak {peak} of {limit} allowed; {fixed} fixed + "
                "{per_sample} per sample)"
            ).format(
                batch=batch,
                peak=format_bytes(result.predicted_peak(result.batch_size)),
                limit=format_bytes(result.limit_bytes),
                fixed=format_bytes(result.fixed_bytes),
                per_sample=format_bytes(result.bytes_per_sample),
            )
        )
        self._say_prediction(result)
        self.use_button.setText(self.tr("Use batch size {batch}").format(batch=batch))
        self.use_button.setEnabled(True)
        if len(result.trials) == 1:
            logged = self.tr("batch-size search: {batch} fits (1 trial)").format(batch=batch)
        else:
            logged = self.tr("batch-size search: {batch} fits ({trials} trials)").format(
                batch=batch, trials=integer(len(result.trials))
            )
        self.log.emit(logged, "info")
        self._redraw()

    def _say_prediction(self, result: Any) -> None:
        """After the answer: what the prediction said and how the trials bore it out, or why there was none;
        each trial's predicted and measured peaks in the tooltip."""
        predicted_batch, note = getattr(result, "predicted_batch", None), getattr(result, "prediction_note", None)
        said = ""
        if predicted_batch is not None and len(result.trials) == 1:
            said = self.tr("The prediction said batch {predicted}; one real trial confirmed {batch}.").format(
                predicted=integer(predicted_batch), batch=integer(result.batch_size)
            )
        elif predicted_batch is not None:
            said = self.tr("The prediction said batch {predicted}; {trials} real trials confirmed {batch}.").format(
                predicted=integer(predicted_batch), trials=integer(len(result.trials)), batch=integer(result.batch_size)
            )
        elif note:
            said = core_text(note)
        if said:
            self.result_label.setText(
                self.tr("{result} {prediction}").format(result=self.result_label.text(), prediction=said)
            )
        lines = [
            self._trial_text(trial) for trial in result.trials if getattr(trial, "predicted_bytes", None) is not None
        ]
        self.result_label.setToolTip("\n".join(lines))

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        """`message`: the task's English text; a UserError the search raised is shown from the error itself."""
        text = error_text(self._failure[0]) if self._failure else message.splitlines()[0]
        self.result_label.setText(text)
        self.log.emit(self.tr("batch-size search: {error}").format(error=text), "error")

    @Slot()
    def _on_ended(self) -> None:
        self.find_button.setEnabled(True)
        self.stop_button.setEnabled(False)

    @Slot()
    def _on_use(self) -> None:
        if self.result is not None:
            self.use_batch_size.emit(int(self.result.batch_size))

    def _redraw(self) -> None:
        fits = [(t.batch_size, t.peak_bytes) for t in self.trials if t.fits and t.peak_bytes is not None]
        fails = [
            (
                t.batch_size,
                t.peak_bytes if t.peak_bytes is not None else (self.result.limit_bytes if self.result else 0),
            )
            for t in self.trials
            if not t.fits
        ]
        self.fit_scatter.setData(*zip(*fits)) if fits else self.fit_scatter.setData([], [])
        predicted = [
            (t.batch_size, t.predicted_bytes) for t in self.trials if getattr(t, "predicted_bytes", None) is not None
        ]
        self.predicted_scatter.setData(*zip(*predicted)) if predicted else self.predicted_scatter.setData([], [])
        self.fail_scatter.setData(*zip(*fails)) if fails else self.fail_scatter.setData([], [])
        if self.result is not None and self.trials:
            xs = np.array([0, max(t.batch_size for t in self.trials)], dtype=float)
            self.fit_line.setData(xs, self.result.fixed_bytes + self.result.bytes_per_sample * xs)
            self.limit_line.show()  # first: a hidden line's label keeps its old text
            self.limit_line.label.setFormat(self.tr("limit {size}").format(size=format_bytes(self.result.limit_bytes)))
            self.limit_line.setPos(self.result.limit_bytes)
            self.limit_line.label.valueChanged()  # the text is rebuilt on a move only: not when the limit stays
        else:
            self.fit_line.setData([], [])
            self.limit_line.hide()
