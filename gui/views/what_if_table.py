"""What if? The form's settings with one change at a time, predicted (`gpu_train_monitor.finder.what_if`): what each
change saves or costs and the largest batch that would then fit the selected device, in a tab of its own beside the
memory breakdown (the breakdown leaves its tab no height for a table's rows).

A table of predictions takes seconds to minutes of CPU (a few predictions per row), so it is worked out only
while the tab is shown, never while a run trains (it would slow the run down), off the GUI thread, and again
only when a setting that changes memory (or the device's capacity) has changed. It comes in two passes: the
rows first (one prediction each), then the largest batch of each (a search over predictions); settings changed
meanwhile stop the work and drop what it found. For a text model a grid over batch x sequence length follows the
table (gpu_train_monitor.gui.views.fit_grid_view), asked for and stopped with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.config.bounds import BOUNDS, FINDER_BOUNDS
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.config.sequences import is_text_dataset
from gpu_train_monitor.gui.form.peak_prediction import MEMORY_FIELDS, problem_text
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.core_text import core_text
from gpu_train_monitor.gui.qt.latest_task import LatestTask
from gpu_train_monitor.gui.qt.locale_format import integer
from gpu_train_monitor.gui.views.fit_grid_view import FitGridView
from gpu_train_monitor.gui.views.prediction_jobs import what_if_job

COLUMNS = 4  # change, predicted peak and verdict, saves or costs, largest batch that fits
VERDICT_COLOURS = {"fits": palette.GOOD, "tight": palette.WARNING, "does not fit": palette.ERROR}


class WhatIfTable(QWidget):
    """The rows for `form`'s settings against `capacity()` (the selected device's bytes, None when unknown)."""

    def __init__(self, form: Any, capacity: Callable[[], int | None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form, self.capacity = form, capacity
        self.result: Any = None  # the WhatIf shown
        self._problem: Any = None
        self._key: tuple[Any, ...] | None = None
        self._max_batch = 0  # the largest batch searched for (the training set's size, where known)
        self._ready = self._running = False
        self.heading = QLabel()
        self.heading.setObjectName("whatIfHeading")
        self.heading.setWordWrap(True)
        self.table = QTableWidget(0, COLUMNS)
        self.table.setObjectName("whatIf")
        self._set_headers()
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)  # the change's name takes what is left
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)  # more rows in view
        # however little height the tabs get, the window never grows taller for it: the table scrolls
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Ignored)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.table, 1)
        self.grid = FitGridView()  # a text model's batch x sequence length
        layout.addWidget(self.grid)
        self.task = LatestTask(self, thread_name="what-if")
        self.task.progress.connect(self._on_result)
        self.task.answered.connect(self._on_answered)
        self.task.failed.connect(lambda text: self._on_answered((text.splitlines() or [""])[0]))
        self._say(self.tr("What if: waiting for PyTorch to load…"))

    # ---- when to work it out -----------------------------------------------------------------------
    def torch_ready(self) -> None:
        self._ready = True
        self.settings_changed()

    def set_running(self, running: bool) -> None:
        if running == self._running:
            return
        self._running = running
        if running and (self.task.busy or self.grid.task.busy):
            self.task.drop()  # it would slow the run: worked out again after it
            self.grid.drop()
            self._key = None
            self._say(self.tr("What if: worked out after the run"))
        elif not running:
            self.settings_changed()

    def shutdown(self, timeout_ms: int = 30_000) -> bool:
        grid_stopped = self.grid.shutdown(timeout_ms)
        return self.task.shutdown(timeout_ms) and grid_stopped

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self.settings_changed()

    def settings_changed(self) -> None:
        """Work the table out again when it is shown and a setting that changes memory has changed."""
        if not self._ready or self._running or not self.isVisible():
            return
        capacity = self.capacity()
        if not self.form.valid or capacity is None:
            self.task.drop()
            self.grid.clear()
            self._key = None
            self._say(self.tr("What if: no prediction while the settings cannot run"))
            return
        values = self.form.values()
        kind = self.form.device_kind()
        key = (tuple(values[field] for field in MEMORY_FIELDS), kind, capacity)
        if key == self._key:
            return
        self._key = key
        config = RunConfig(**values)
        max_batch = int(FINDER_BOUNDS["max_batch"].default)
        train = self.form.train_images(config)
        if train:  # a batch larger than the training set cannot run: no search beyond it
            max_batch = max(min(max_batch, train, int(BOUNDS["batch_size"].maximum)), 1)
        self.task.request(what_if_job(config, kind, capacity, max_batch))
        if is_text_dataset(config.dataset):
            self.grid.request(config, kind, capacity)
        else:
            self.grid.clear()
        self._max_batch = max_batch
        self.setEnabled(False)  # the last table, greyed out, until the new one comes
        if self.result is None:
            self._say(self.tr("What if: predicting each change…"))

    # ---- showing it -----------------------------------------------------------------------------
    def _on_answered(self, value: Any) -> None:
        if value is None:  # stopped: a newer request follows
            return
        self._on_result(value)
        self.setEnabled(True)

    def _on_result(self, value: Any) -> None:
        if hasattr(value, "rows"):
            self.result, self._problem = value, None
        else:
            self.result, self._problem = None, value
        self.show_again()

    def _set_headers(self) -> None:
        self.table.setHorizontalHeaderLabels(
            [
                self.tr("Change"),
                self.tr("Predicted peak"),
                self.tr("Saves (−: costs)"),
                self.tr("Largest batch that fits"),
            ]
        )

    def show_again(self) -> None:
        """The table held, said again (after a language change too)."""
        self._set_headers()
        self.grid.show_again()
        if self.result is None:
            if self._problem is not None:
                short, whole = problem_text(self._problem)
                self._say(self.tr("What if: no prediction ({reason})").format(reason=short))
                self.heading.setToolTip(whole)
            return
        w = self.result
        searched = any(row.fits_batch is not None for row in w.rows)  # the second pass: each row's batch searched
        fits = self._batch_text(w.fits_batch if searched else None, searched)
        self.heading.setText(
            self.tr("As set: peak {peak} of {capacity}, {verdict}; the largest batch that fits: {fits}.").format(
                peak=format_bytes(w.total_bytes),
                capacity=format_bytes(w.capacity_bytes),
                verdict=self._verdict(w.verdict),
                fits=fits,
            )
        )
        self.heading.setToolTip(
            self.tr(
                "The settings on the left with one change at a time, each predicted without using memory. Fits: "
                "under the capacity less the {margin}% margin the batch-size finder keeps free."
            ).format(margin=integer(round(100 * w.margin)))
        )
        self.table.setRowCount(len(w.rows))
        for index, row in enumerate(w.rows):
            self._fill(index, row, searched)

    def _greyed_out(self, change: str) -> str | None:
        """Why the form greys out what `change` changes to on this device (fp16 on the CPU), else None."""
        widgets = self.form.widgets
        if change in ("fp16", "bf16"):
            combo = widgets["amp"]
            model = combo.model()
            item = model.item(combo.findData(change)) if hasattr(model, "item") else None
            if item is not None and not item.isEnabled():
                return item.toolTip()
        elif change in ("channels_last", "activation_checkpointing"):
            widget = widgets[change]
            if widget.testAttribute(Qt.WidgetAttribute.WA_ForceDisabled):  # greyed itself, not by a run's lock
                return widget.toolTip()
        return None

    def _fill(self, index: int, row: Any, searched: bool) -> None:
        change = QTableWidgetItem(core_text(row.label))
        refused = self._greyed_out(row.change)
        if refused is not None and row.total_bytes is not None:  # predicted, but not a choice here
            cells = [
                change,
                QTableWidgetItem(self.tr("not on this device")),
                QTableWidgetItem(""),
                QTableWidgetItem(""),
            ]
            for cell in cells:
                cell.setForeground(QColor(palette.NEUTRAL))
                cell.setToolTip(refused)
        elif row.total_bytes is None:
            short, whole = problem_text(row.reason)
            cells = [change, QTableWidgetItem(self.tr("no prediction: {reason}").format(reason=short))]
            cells += [QTableWidgetItem(""), QTableWidgetItem("")]
            for cell in cells:
                cell.setToolTip(whole)
        else:
            peak = QTableWidgetItem(
                self.tr("{peak}, {verdict}").format(
                    peak=format_bytes(row.total_bytes), verdict=self._verdict(row.verdict)
                )
            )
            peak.setForeground(QColor(VERDICT_COLOURS.get(row.verdict, palette.NEUTRAL)))
            saved = row.saved_bytes
            if saved > 0:
                saves = self.tr("saves {size}").format(size=format_bytes(saved))
            elif saved < 0:
                saves = self.tr("costs {size}").format(size=format_bytes(-saved))
            else:
                saves = self.tr("no change")
            blocks = getattr(row, "blocks", ())  # checkpointing: the blocks whose bytes at the peak fall the most
            if blocks:
                named = self.tr(", ").join(f"{name} {format_bytes(size)}" for name, size in blocks)
                saves = self.tr("{saves}; less in {blocks}").format(saves=saves, blocks=named)
            cells = [
                change,
                peak,
                QTableWidgetItem(saves),
                QTableWidgetItem(self._batch_text(row.fits_batch, searched)),
            ]
            if blocks:
                cells[2].setToolTip(
                    self.tr("Predicted with and without checkpointing, by module: the blocks holding the most less")
                )
            cells[3].setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        for column, cell in enumerate(cells):
            self.table.setItem(index, column, cell)

    def _batch_text(self, batch: int | None, searched: bool) -> str:
        if batch is None:
            return self.tr("…") if not searched else ""
        if batch == 0:
            return self.tr("none (not even 1)")
        if batch >= self._max_batch < int(FINDER_BOUNDS["max_batch"].default):  # searched no further
            return self.tr("{batch} (the whole training set)").format(batch=integer(batch))
        return integer(batch)

    def _verdict(self, verdict: str) -> str:
        if verdict == "fits":
            return self.tr("fits")
        if verdict == "tight":
            return self.tr("tight")
        return self.tr("does not fit")

    def _say(self, text: str) -> None:
        self.setEnabled(True)
        self.result, self._problem = None, None
        self.heading.setText(text)
        self.heading.setToolTip("")
        self.table.setRowCount(0)
