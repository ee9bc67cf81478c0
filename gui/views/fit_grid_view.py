"""Will it fit over batch x sequence length, for a text model: a 3 x 3 grid around the form's batch size and sequence
length (half, as set, double), each cell the predicted peak coloured by whether it fits the selected device
(`gpu_train_monitor.finder.fit_grid`), shown under the what-if table that asks it.

Nine predictions take seconds of CPU, so the grid is worked out off the GUI thread, one request at a time (a newer
request stops the older job between predictions), and only for a text model: an image model's samples have no length.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.gui.form.peak_prediction import problem_text
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.latest_task import LatestTask
from gpu_train_monitor.gui.qt.locale_format import integer
from gpu_train_monitor.gui.views.prediction_jobs import fit_grid_job

VERDICT_COLOURS = {"fits": palette.GOOD, "tight": palette.WARNING, "does not fit": palette.ERROR}


class FitGridView(QWidget):
    """Rows of batch sizes, columns of sequence lengths; `request` works a grid out, `clear` hides it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: Any = None  # the FitGrid shown
        self._problem: Any = None
        self.heading = QLabel()
        self.heading.setObjectName("fitGridHeading")
        self.heading.setWordWrap(True)
        self.table = QTableWidget(0, 0)
        self.table.setObjectName("fitGrid")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addWidget(self.table)
        self.task = LatestTask(self, thread_name="fit-grid")
        self.task.answered.connect(self._on_answered)
        self.task.progress.connect(self._on_partial)
        self.task.failed.connect(lambda text: self._on_answered((text.splitlines() or [""])[0]))
        self.hide()

    def request(self, config: RunConfig, kind: str, capacity: int) -> None:
        """Work the grid out for `config` on a device of kind `kind` holding `capacity` bytes."""
        self.task.request(fit_grid_job(config, kind, capacity))
        self.show()
        self.table.setEnabled(False)  # the last grid, greyed out, until the new one comes
        if self.result is None:
            self._say(self.tr("Batch × sequence length: predicting each cell…"))

    def clear(self) -> None:
        """No grid: not a text model, or settings that cannot run."""
        self.task.drop()
        self.result = self._problem = None
        self.hide()

    def drop(self) -> None:
        """Stop working (a run started): the grid shown stays, greyed out."""
        self.task.drop()

    def shutdown(self, timeout_ms: int) -> bool:
        return self.task.shutdown(timeout_ms)

    def _on_partial(self, value: Any) -> None:
        """The first cells of the latest request's grid: shown as they come, the rest waiting."""
        self.result, self._problem = value, None
        self.table.setEnabled(True)
        self.show_again()

    def _on_answered(self, value: Any) -> None:
        if value is None:  # stopped: a newer request follows
            return
        if hasattr(value, "cells"):
            self.result, self._problem = value, None
        else:
            self.result, self._problem = None, value
        self.table.setEnabled(True)
        self.show_again()

    def show_again(self) -> None:
        """The grid held, said again (after a language change too)."""
        if self.result is None:
            if self._problem is not None:
                short, whole = problem_text(self._problem)
                self._say(self.tr("Batch × sequence length: no prediction ({reason})").format(reason=short))
                self.heading.setToolTip(whole)
            return
        grid = self.result
        self.heading.setText(
            self.tr("Will it fit, batch × sequence length: the predicted peak of each against {capacity}").format(
                capacity=format_bytes(grid.capacity_bytes)
            )
        )
        self.heading.setToolTip(
            self.tr(
                "One training step predicted per cell without using memory. Fits: under the capacity less the "
                "{margin}% margin the batch-size finder keeps free; tight: inside the margin."
            ).format(margin=integer(round(100 * grid.margin)))
        )
        self.table.setRowCount(len(grid.batch_sizes))
        self.table.setColumnCount(len(grid.seq_lens))
        self.table.setHorizontalHeaderLabels(
            [self.tr("{tokens} tokens").format(tokens=integer(n)) for n in grid.seq_lens]
        )
        batches = [self.tr("batch {batch}").format(batch=integer(b)) for b in grid.batch_sizes]
        self.table.setVerticalHeaderLabels(batches)
        for row, batch in enumerate(grid.batch_sizes):
            for column, seq_len in enumerate(grid.seq_lens):
                cell = grid.cell(batch, seq_len)
                self.table.setItem(row, column, self._cell(cell) if cell is not None else QTableWidgetItem("…"))
        self.table.setFixedHeight(self._table_height())

    def _cell(self, cell: Any) -> QTableWidgetItem:
        peak, verdict = format_bytes(cell.total_bytes), self._verdict(cell.verdict)
        item = QTableWidgetItem(self.tr("{peak}, {verdict}").format(peak=peak, verdict=verdict))
        item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
        item.setForeground(QColor(VERDICT_COLOURS.get(cell.verdict, palette.NEUTRAL)))
        item.setToolTip(
            self.tr("batch {batch} × {tokens} tokens: predicted peak {peak}").format(
                batch=integer(cell.batch_size), tokens=integer(cell.seq_len), peak=format_bytes(cell.total_bytes)
            )
        )
        return item

    def _table_height(self) -> int:
        """Every row in view: the grid is small, and a scroll bar would hide a row of it."""
        rows = sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        return rows + self.table.horizontalHeader().sizeHint().height() + 2 * self.table.frameWidth() + 2

    def _verdict(self, verdict: str) -> str:
        if verdict == "fits":
            return self.tr("fits")
        if verdict == "tight":
            return self.tr("tight")
        return self.tr("does not fit")

    def _say(self, text: str) -> None:
        self.heading.setText(text)
        self.heading.setToolTip("")
        self.table.setRowCount(0)
        self.table.setColumnCount(0)
