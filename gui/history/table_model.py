"""The run history as a Qt table model: one row per recorded run, refreshed from the store without losing the
selection.

`RunHistoryModel` keeps its rows in id order and changes only the rows that changed (rows removed,
inserted and updated in place, never a reset), so a refresh every second keeps what the user selected and
where the table is scrolled. Each cell's text, sort value (`SORT_ROLE`: a number for numeric columns) and
tooltip are said here; `gpu_train_monitor.gui.history.table_view` sorts, filters and shows the rows.
"""

from __future__ import annotations

import bisect
import math
import os
import time
from collections.abc import Sequence

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QAbstractTableModel,
    QCoreApplication,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QFont

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.gui.history.row_text import (
    described_title,
    devices_text,
    duration_text,
    elsewhere,
    last_loss_text,
    machine_text,
    run_text,
    state_text,
    steps_text,
    when_text,
)
from gpu_train_monitor.gui.i18n.status_text import status_colour
from gpu_train_monitor.gui.i18n.throughput_text import speed_text
from gpu_train_monitor.gui.qt.core_text import core_text
from gpu_train_monitor.gui.qt.locale_format import date_time
from gpu_train_monitor.store.run_store import RunRow

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
RUN_ID_ROLE = Qt.ItemDataRole.UserRole + 2
# key, header, tooltip of the header (English: shown through the translator, context "run_history")
COLUMNS = (
    (
        "overlay",
        QT_TRANSLATE_NOOP("run_history", "Overlay"),
        QT_TRANSLATE_NOOP("run_history", "Lay this run's loss and memory over the live plots"),
    ),
    (
        "when",
        QT_TRANSLATE_NOOP("run_history", "When"),
        QT_TRANSLATE_NOOP("run_history", "When the run started (local time)"),
    ),
    ("run", QT_TRANSLATE_NOOP("run_history", "Run"), QT_TRANSLATE_NOOP("run_history", "The run's id and name")),
    ("model", QT_TRANSLATE_NOOP("run_history", "Model"), ""),
    ("dataset", QT_TRANSLATE_NOOP("run_history", "Dataset"), ""),
    ("device", QT_TRANSLATE_NOOP("run_history", "Device"), ""),
    (
        "host",
        QT_TRANSLATE_NOOP("run_history", "Host"),
        QT_TRANSLATE_NOOP(
            "run_history",
            "The machine the run trained on: its host name, after the name you connected to it by for a run "
            "copied from another machine",
        ),
    ),
    (
        "status",
        QT_TRANSLATE_NOOP("run_history", "Status"),
        QT_TRANSLATE_NOOP("run_history", "live: training now (in this window or another process); else how it ended"),
    ),
    (
        "steps",
        QT_TRANSLATE_NOOP("run_history", "Steps"),
        QT_TRANSLATE_NOOP("run_history", "Steps trained (of the steps planned, when it did not train them all)"),
    ),
    (
        "speed",
        QT_TRANSLATE_NOOP("run_history", "Speed"),
        QT_TRANSLATE_NOOP(
            "run_history",
            "Median training images per second over the run's reports (the first left out: warm-up); tokens per "
            "second for a text run",
        ),
    ),
    (
        "loss",
        QT_TRANSLATE_NOOP("run_history", "Final loss"),
        QT_TRANSLATE_NOOP("run_history", "Mean loss of the last report"),
    ),
    (
        "peak",
        QT_TRANSLATE_NOOP("run_history", "Peak memory"),
        QT_TRANSLATE_NOOP("run_history", "Highest allocated memory (on the CPU: process RSS)"),
    ),
    ("note", QT_TRANSLATE_NOOP("run_history", "Note"), ""),
)
KEYS = tuple(key for key, _, _ in COLUMNS)
OVERLAY_COLUMN = KEYS.index("overlay")
MISSING = -math.inf  # sorts a run with no figure (yet) below every figure


class RunHistoryModel(QAbstractTableModel):
    """Recorded runs, one row each, in id order; the overlay column's checkboxes say which are overlaid."""

    overlay_toggled = Signal(int, bool)  # run id, overlaid: a click in the overlay column

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[RunRow] = []
        self.overlaid: set[int] = set()
        self.own_pid = os.getpid()
        self.scripts: dict[int, str] = {}  # a watched run's script ("train.py (~/proj)") by run id: the panel's

    # ---- updates ---------------------------------------------------------------------------------
    def set_rows(self, rows: Sequence[RunRow]) -> None:
        """Make the table show `rows`: removes, inserts and updates only what differs."""
        new = {row.id: row for row in rows}
        for i in reversed(range(len(self.rows))):
            if self.rows[i].id not in new:
                self.beginRemoveRows(QModelIndex(), i, i)
                del self.rows[i]
                self.endRemoveRows()
        ids = [row.id for row in self.rows]
        for run_id in sorted(new.keys() - set(ids)):
            i = bisect.bisect_left(ids, run_id)
            self.beginInsertRows(QModelIndex(), i, i)
            self.rows.insert(i, new[run_id])
            ids.insert(i, run_id)
            self.endInsertRows()
        last = len(KEYS) - 1
        for i, row in enumerate(self.rows):
            if new[row.id] != row:
                self.rows[i] = new[row.id]
                self.dataChanged.emit(self.index(i, 0), self.index(i, last))
        self.overlaid &= new.keys()

    def row_of(self, run_id: int) -> RunRow | None:
        return next((row for row in self.rows if row.id == run_id), None)

    def set_overlaid(self, run_id: int, overlaid: bool) -> None:
        """Tick or untick a run's overlay box (without `overlay_toggled`: the caller made the change)."""
        if (run_id in self.overlaid) == overlaid:
            return
        self.overlaid.symmetric_difference_update({run_id})
        for i, row in enumerate(self.rows):
            if row.id == run_id:
                index = self.index(i, OVERLAY_COLUMN)
                self.dataChanged.emit(index, index, [Qt.ItemDataRole.CheckStateRole])

    # ---- the model's interface -------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(KEYS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return QCoreApplication.translate("run_history", COLUMNS[section][1])
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = COLUMNS[section][2]
            return QCoreApplication.translate("run_history", tip) if tip else None
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == OVERLAY_COLUMN:
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    def setData(self, index: QModelIndex | QPersistentModelIndex, value, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if not index.isValid() or index.column() != OVERLAY_COLUMN or role != Qt.ItemDataRole.CheckStateRole:
            return False
        run_id = self.rows[index.row()].id
        on = Qt.CheckState(value) == Qt.CheckState.Checked
        if (run_id in self.overlaid) != on:
            self.overlaid.symmetric_difference_update({run_id})
            self.dataChanged.emit(index, index, [Qt.ItemDataRole.CheckStateRole])
            self.overlay_toggled.emit(run_id, on)
        return True

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row, key = self.rows[index.row()], KEYS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(row, key)
        if role == SORT_ROLE:
            return self._sort_value(row, key)
        if role == RUN_ID_ROLE:
            return row.id
        if role == Qt.ItemDataRole.CheckStateRole and key == "overlay":
            return Qt.CheckState.Checked if row.id in self.overlaid else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row, key)
        if role == Qt.ItemDataRole.ForegroundRole and key == "status":
            return QBrush(QColor(status_colour(row.status, row.live)))
        if role == Qt.ItemDataRole.FontRole and row.live:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole and key in ("steps", "speed", "loss", "peak"):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _text(self, row: RunRow, key: str) -> str | None:
        match key:
            case "when":
                return when_text(row.started_at)
            case "run":
                return run_text(row, self.scripts.get(row.id, ""))
            case "device":
                return devices_text(row, with_machine=False)  # the machine has a column of its own
            case "host":
                return machine_text(row)
            case "model" | "dataset" | "note":
                return getattr(row, key)
            case "status":
                return state_text(row, self.own_pid)
            case "steps":
                return steps_text(row)
            case "speed":  # 0: samples not counted
                return "–" if not row.samples_per_s else speed_text(row.speed, row.throughput_unit)
            case "loss":
                return last_loss_text(row)
            case "peak":
                return format_bytes(row.peak_allocated_bytes) if row.peak_allocated_bytes else "–"
        return None

    def _sort_value(self, row: RunRow, key: str) -> float | str:
        match key:
            case "overlay":
                return float(row.id in self.overlaid)
            case "when":
                return row.started_at
            case "run":
                return float(row.id)
            case "steps":
                return float(row.steps)
            case "speed":
                return MISSING if row.speed is None else row.speed
            case "loss":  # a NaN loss (diverged) sorts with the missing ones
                return MISSING if row.loss_last is None or math.isnan(row.loss_last) else row.loss_last
            case "peak":
                return float(row.peak_allocated_bytes)
            case "status":
                return state_text(row, self.own_pid)
        return str(getattr(row, key, "")).lower()

    def _tooltip(self, row: RunRow, key: str) -> str | None:
        match key:
            case "run":
                lines = [described_title(row, self.scripts.get(row.id, ""))]
                if row.note:
                    lines.append(self.tr("note: {note}").format(note=row.note))
                if row.resumes:
                    lines.append(
                        self.tr("recorded by pid {pid} on {host}, resumed {resumes}x").format(
                            pid=row.pid, host=machine_text(row), resumes=row.resumes
                        )
                    )
                else:
                    lines.append(self.tr("recorded by pid {pid} on {host}").format(pid=row.pid, host=machine_text(row)))
                return "\n".join(lines)
            case "when":
                end = row.finished_at if row.finished_at is not None else (time.time() if row.live else None)
                started = date_time(row.started_at, seconds=True)
                if end is None:
                    return self.tr("started {time}").format(time=started)
                return self.tr("started {time}, {duration} long").format(
                    time=started, duration=duration_text(end - row.started_at)
                )
            case "status":
                return core_text(row.message) or None  # the store keeps text: shown as it was written
            case "device":
                return row.device_name or None
            case "host":
                if row.origin:
                    return self.tr("copied from {origin}, where it trained on {host}").format(
                        origin=row.origin, host=row.host
                    )
                if elsewhere(row):
                    return self.tr("recorded on {host}").format(host=row.host)
                return self.tr("recorded on this machine ({host})").format(host=row.host)
            case "peak":
                return self.tr("peak allocated {allocated}, peak reserved {reserved}").format(
                    allocated=format_bytes(row.peak_allocated_bytes), reserved=format_bytes(row.peak_reserved_bytes)
                )
            case "note":
                return row.note or None
            case "overlay":
                return self.tr("Overlay this run on the live loss and memory plots")
        return None
