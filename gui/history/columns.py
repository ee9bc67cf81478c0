"""The Runs table's columns sized to what they hold: "live (this window)" and "#6 [optimizer=adamw]" were cut
at fixed widths while the Note column sat off-screen.

Each column takes the width of its header and its widest cell, up to `MAX_COLUMN_WIDTH` (a long name or
note is cut there; its tooltip has it whole). The Note sits beside the run it describes, so it stays in view;
the last column stretches over what is left. Columns are measured when rows come or go, and widened (never
narrowed under the user's hand) when a cell changes, such as a live run's status at its end.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtWidgets import QTableView

MAX_COLUMN_WIDTH = 200  # pixels


class ColumnFitter(QObject):
    """Keeps `table`'s columns fitted to their contents (see the module's docstring)."""

    def __init__(self, table: QTableView, note_after: int, note_column: int) -> None:
        """`note_column` is shown right after `note_after` (the run's id and name)."""
        super().__init__(table)
        self.table = table
        header = table.horizontalHeader()
        header.moveSection(header.visualIndex(note_column), header.visualIndex(note_after) + 1)
        self._grow_only = True
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)  # many rows inserted at once: measured once, after them
        self._timer.timeout.connect(self._fit_now)
        model = table.model()
        for signal in (model.rowsInserted, model.rowsRemoved, model.modelReset, model.layoutChanged):
            signal.connect(self.refit)
        model.dataChanged.connect(self._widen)
        self.fit()

    @Slot()
    def refit(self, *_: object) -> None:
        self._grow_only = False
        self._timer.start(0)

    @Slot()
    def _widen(self, *_: object) -> None:
        self._timer.start(0)

    @Slot()
    def _fit_now(self) -> None:
        self.fit(self._grow_only)
        self._grow_only = True

    def fit(self, grow_only: bool = False) -> None:
        """Size every column but the last shown (it stretches) to its header and its widest cell."""
        header = self.table.horizontalHeader()
        last = header.logicalIndex(header.count() - 1)
        for column in range(header.count()):
            if column == last or header.isSectionHidden(column):
                continue
            wanted = min(max(self.table.sizeHintForColumn(column), header.sectionSizeHint(column)), MAX_COLUMN_WIDTH)
            if not grow_only or wanted > header.sectionSize(column):
                header.resizeSection(column, wanted)
