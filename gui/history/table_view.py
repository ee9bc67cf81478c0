"""The runs' table as the Runs tab shows it: `RunHistoryFilter` sorts the rows of
`gpu_train_monitor.gui.history.table_model`'s model through `SORT_ROLE` (a number for numeric columns, missing values
first in ascending order) and keeps the runs whose fields hold every word of the search text (or whose "#id" it is);
`history_table` is the view.

Apart from the model, which holds the rows and says what each cell shows, because this is how they are ordered,
picked out and laid out.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from gpu_train_monitor.gui.history.row_text import state_text
from gpu_train_monitor.gui.history.table_model import KEYS, RUN_ID_ROLE, SORT_ROLE, RunHistoryModel
from gpu_train_monitor.store.search import run_matches

WIDTHS = {
    "overlay": 56,
    "when": 128,
    "run": 100,
    "model": 80,
    "dataset": 72,
    "device": 56,
    "host": 80,
    "status": 96,
    "steps": 64,
    "speed": 70,
    "loss": 74,
    "peak": 96,
}  # pixels; the note takes what is left


class RunHistoryFilter(QSortFilterProxyModel):
    """Sorts by `SORT_ROLE` and keeps the runs matching the search text (gpu_train_monitor.store.search's rule, as the
    CLI's)."""

    def __init__(self, source: RunHistoryModel, parent=None) -> None:
        super().__init__(parent)
        self.setSourceModel(source)
        self.setSortRole(SORT_ROLE)
        self.setDynamicSortFilter(True)
        self._search = ""

    def set_search(self, text: str) -> None:
        if text == self._search:
            return
        if hasattr(self, "beginFilterChange"):  # Qt 6.10: invalidateFilter() is deprecated
            self.beginFilterChange()
            self._search = text
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self._search = text
            self.invalidateRowsFilter()

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex) -> bool:  # noqa: N802
        model = self.sourceModel()
        assert isinstance(model, RunHistoryModel)
        row = model.rows[source_row]  # the status also as shown, in the user's language; a watched run's script
        return run_matches(row, self._search, state_text(row), model.scripts.get(row.id, ""))

    def run_id(self, row: int) -> int:
        return int(self.index(row, 0).data(RUN_ID_ROLE))

    def visible_ids(self) -> list[int]:
        """The runs the table shows, top to bottom."""
        return [self.run_id(row) for row in range(self.rowCount())]


def history_table(proxy: RunHistoryFilter) -> QTableView:
    """The table of runs: newest first, whole rows selected (several at once), sorted by a header click."""
    table = QTableView()
    table.setObjectName("runTable")
    table.setModel(proxy)
    table.setSortingEnabled(True)
    table.sortByColumn(KEYS.index("when"), Qt.SortOrder.DescendingOrder)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setAlternatingRowColors(True)
    table.setWordWrap(False)
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(22)
    for key, width in WIDTHS.items():
        table.setColumnWidth(KEYS.index(key), width)
    header = table.horizontalHeader()
    header.setStretchLastSection(True)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)  # never measured per refresh
    return table
