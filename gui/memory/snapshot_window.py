"""File ▸ Open memory snapshot…: a window of its own that shows a CUDA memory snapshot (from this machine or any
other): its active-memory timeline and the largest allocations live at the peak, with the user's frames that
made them.

The file is read and summarised off the GUI thread (`BackgroundTask`; a 1,000,000-event snapshot takes about a
second or two) with `gpu_train_monitor.memory.snapshot_reader`, which refuses a pickle that names any Python
object before anything runs; a file that cannot be read says why in the window, in one line.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.gui.plots.snapshot_plot import SnapshotTimelinePlot
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.background import BackgroundTask
from gpu_train_monitor.gui.qt.locale_format import integer
from gpu_train_monitor.memory.snapshot_reader import SnapshotReading, read_snapshot
from gpu_train_monitor.memory.snapshot_summary import LiveAllocation, SnapshotSummary


class SnapshotWindow(QWidget):
    """One snapshot's window; `open_file(path)` reads it in the background. `loaded` / `load_failed` tell when
    it is shown or why not (the message is also in the window)."""

    loaded = Signal()
    load_failed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)  # its opener keeps it, to reuse or drop
        self.reading: SnapshotReading | None = None
        self.path = ""
        self.setWindowTitle(self.tr("Memory snapshot"))
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.plot = SnapshotTimelinePlot()
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(
            [self.tr("Size"), self.tr("Allocated at"), self.tr("Where (innermost frame of your code first)")]
        )
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)  # ten rows in view
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.itemSelectionChanged.connect(self._on_row_picked)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table_title = QLabel()
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.table_title)
        lower_layout.addWidget(self.table, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.plot)
        splitter.addWidget(lower)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self.header)
        layout.addWidget(splitter, 1)
        self.task = BackgroundTask(self, thread_name="snapshot-reader")
        self.task.done.connect(self._on_read)
        self.task.failed.connect(self._on_failed)
        self.resize(1100, 760)

    def open_file(self, path: str) -> None:
        """Read `path` in the background and show it; a read still under way is left to finish unseen."""
        self.path = path
        self.reading = None
        self.setWindowTitle(self.tr("Memory snapshot: {name}").format(name=Path(path).name))
        self.header.setStyleSheet("")
        self.header.setText(self.tr("Reading {path}…").format(path=html.escape(path)))
        self.plot.set_timeline(*_empty())
        self.table.setRowCount(0)
        self.table_title.clear()
        if self.task.running:
            self.task.shutdown()
        self.task.start(lambda _progress, _cancelled: read_snapshot(path))

    @Slot(object)
    def _on_read(self, reading: Any) -> None:
        if not isinstance(reading, SnapshotReading) or reading.summary.path != self.path:
            return  # a file opened before the one asked for now
        self.reading = reading
        summary = reading.summary
        self.header.setText(self._summary_text(summary))
        self.plot.set_timeline(reading.live_bytes, reading.reserved_bytes, summary.peak_event)
        self._fill_table(summary.largest_at_peak)
        self.table_title.setText(
            self.tr(
                "The {count} largest allocations live at the peak (pick one to shade its life on the timeline)"
            ).format(count=integer(len(summary.largest_at_peak)))
        )
        self.loaded.emit()

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        line = message.splitlines()[0] if message else self.tr("the file could not be read")
        self.header.setStyleSheet(f"color: {palette.ERROR};")
        self.header.setText(html.escape(line))
        self.load_failed.emit(line)

    @Slot()
    def _on_row_picked(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if self.reading is None or not rows:
            self.plot.lifetime.hide()
            return
        allocation = self.reading.summary.largest_at_peak[rows[0].row()]
        self.plot.show_lifetime(allocation.event, allocation.freed_event)

    def _summary_text(self, summary: SnapshotSummary) -> str:
        peak = format_bytes(summary.peak_bytes)
        parts = [
            self.tr("<b>Peak {peak}</b> of live allocations on cuda:{device}").format(peak=peak, device=summary.device),
            self.tr("{events} allocator events").format(events=integer(summary.events)),
            self.tr("{reserved} reserved at the dump").format(reserved=format_bytes(summary.reserved_bytes)),
        ]
        if summary.start_bytes:
            parts.append(
                self.tr("{start} already live when the trace began").format(start=format_bytes(summary.start_bytes))
            )
        if summary.oom_events:
            parts.append(self.tr("{count} out of memory in the trace").format(count=integer(summary.oom_events)))
        text = " · ".join(parts)
        if not summary.stacks_recorded:
            text += "<br>" + self.tr(
                "No stack frames were recorded: record with torch.cuda.memory._record_memory_history(stacks='python')"
                " to see where each allocation was made."
            )
        return text

    def _fill_table(self, allocations: tuple[LiveAllocation, ...]) -> None:
        self.table.setRowCount(len(allocations))
        for row, allocation in enumerate(allocations):
            size = QTableWidgetItem(format_bytes(allocation.size_bytes))
            size.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            when = (
                self.tr("before the trace")
                if allocation.event is None
                else self.tr("event {event}").format(event=integer(allocation.event))
            )
            if allocation.frames:
                where = " ← ".join(f"{Path(f.filename).name}:{f.line} {f.name}" for f in allocation.frames)
                tip = "\n".join(f.text() for f in allocation.frames)
            elif allocation.stack_depth:
                where = tip = self.tr("only PyTorch's own frames")
            else:
                where = tip = self.tr("no stack recorded")
            frames = QTableWidgetItem(where)
            frames.setToolTip(tip)
            for column, item in enumerate((size, QTableWidgetItem(when), frames)):
                self.table.setItem(row, column, item)

    def closeEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        self.task.shutdown()  # never leave a running QThread behind a closed window
        super().closeEvent(event)


def _empty() -> tuple[Any, Any, int]:
    import numpy as np

    return np.zeros(0), np.zeros(0), -1
