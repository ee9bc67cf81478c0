"""The Runs tab: every run recorded in the run store (this window's and those started elsewhere: a terminal,
tmux, a script), searchable and sortable; open one in a window of its own, overlay several on the live
plots, rename, annotate, export or delete them.

The table re-reads the store every `REFRESH_INTERVAL_MS` while it is shown (one small query), so a run
started in a terminal appears as *live* within a second and becomes completed, stopped or interrupted when
it ends; the selection and the scroll position survive the refresh. Overlays of a live run keep growing:
their feeds are polled on the same timer whether the tab is shown or not. Every store problem (locked,
read-only, damaged, deleted) is a line in the panel, never an exception.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence, QShowEvent
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QFileDialog, QHBoxLayout, QHeaderView, QInputDialog,
                               QLabel, QLineEdit, QMenu, QMessageBox, QPushButton, QTableView, QTabWidget, QToolButton,
                               QVBoxLayout, QWidget)

from core.errors import UserError
from core.run_store import RunRow, StoreError
from gui.loss_plot import LossPlot
from gui.memory_plot import MemoryPlot
from gui.overlays import Overlays
from gui.run_feed import RunFeed, StoreLink
from gui.run_history import KEYS, OVERLAY_COLUMN, RunHistoryFilter, RunHistoryModel, run_text, status_text, when_text
from gui.stored_run_view import StoredRunView

REFRESH_INTERVAL_MS = 1000
# (format, menu text, what the dialog asks for)
EXPORTS = (("json", "JSON document…", "file"), ("csv", "CSV files (steps, memory)…", "folder"),
           ("tensorboard", "TensorBoard log dir…", "folder"))
WIDTHS = {"overlay": 56, "when": 112, "run": 90, "model": 80, "dataset": 72, "device": 56, "status": 100,
          "steps": 70, "speed": 66, "loss": 70, "peak": 84}


class HistoryPanel(QWidget):
    """Recorded runs in the store at `store_path`; overlays go on `loss_plot` and `memory_plot`."""

    message = Signal(str)  # what an action did ("exported run 12 to ..."), for the window's status bar

    def __init__(self, store_path: Path | str, loss_plot: LossPlot, memory_plot: MemoryPlot,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.link = StoreLink(store_path)
        self.model = RunHistoryModel(self)
        self.proxy = RunHistoryFilter(self.model, self)
        self.overlays = Overlays(loss_plot, memory_plot, self)
        self.overlay_feeds: dict[int, RunFeed] = {}  # the overlaid runs still recording
        self.views: dict[int, StoredRunView] = {}
        self.model.overlay_toggled.connect(self.set_overlay)
        self._build()
        self.refresh_timer = QTimer(self)
        self.refresh_timer.setInterval(REFRESH_INTERVAL_MS)
        self.refresh_timer.timeout.connect(self.refresh)
        self.refresh_timer.start()
        self.refresh()

    # ---- layout ----------------------------------------------------------------------------------
    def _build(self) -> None:
        self.search = QLineEdit()
        self.search.setObjectName("runSearch")
        self.search.setClearButtonEnabled(True)
        self.search.setPlaceholderText("Search runs: name, note, model, dataset, device, status or #id")
        self.search.textChanged.connect(self.proxy.set_search)
        self.search.textChanged.connect(self._update_info)

        self.table = QTableView()
        self.table.setObjectName("runTable")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(KEYS.index("when"), Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        for key, width in WIDTHS.items():
            self.table.setColumnWidth(KEYS.index(key), width)
        header.setStretchLastSection(True)  # the note takes what is left
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.doubleClicked.connect(self._on_double_clicked)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._on_context_menu)
        self.table.selectionModel().selectionChanged.connect(self._update_buttons)

        self.open_action = self._action("Open run…", self.open_selected,
                                        "Open the selected runs, each in a window of its own (a live run is followed "
                                        "as it trains); with none selected, show the list of runs")
        self.rename_action = self._action("Rename…", self.rename_selected, "Give the selected run a name")
        self.note_action = self._action("Note…", self.note_selected, "Write a note on the selected run")
        self.delete_action = self._action("Delete…", self.delete_selected,
                                          "Delete the selected runs and everything recorded for them (asks first)")
        self.delete_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.table.addAction(self.delete_action)
        self.clear_overlays_action = self._action("Clear overlays", self.clear_overlays,
                                                  "Take every overlaid run off the live plots")
        self.export_menu = QMenu("Export run", self)
        for fmt, text, _ in EXPORTS:
            action = self.export_menu.addAction(text)
            action.triggered.connect(lambda _=False, f=fmt: self.export_selected(f))
        self.export_action = self.export_menu.menuAction()
        self.export_action.setStatusTip("Export the selected run as JSON, CSV or a TensorBoard log dir")

        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.search, 1)
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setToolTip(self.export_action.statusTip())
        self.export_button.setMenu(self.export_menu)
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        for action in (self.open_action, self.rename_action, self.note_action):
            buttons.addWidget(self._button(action, "Open" if action is self.open_action else None))
        buttons.addWidget(self.export_button)
        for action in (self.delete_action, self.clear_overlays_action):
            buttons.addWidget(self._button(action))
        self.info = QLabel()
        self.info.setObjectName("runHistoryInfo")
        self.info.setWordWrap(True)
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(buttons)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.info)
        self._problem: str | None = None
        self._update_buttons()

    def _action(self, text: str, slot: object, tip: str) -> QAction:
        action = QAction(text, self)
        action.setStatusTip(tip)
        action.setToolTip(tip)
        action.triggered.connect(slot)
        return action

    def _button(self, action: QAction, text: str | None = None) -> QPushButton:
        """A button that triggers `action` and follows its tooltip and enabled state."""
        button = QPushButton(text or action.text())
        button.setToolTip(action.toolTip())
        button.clicked.connect(action.trigger)
        action.changed.connect(lambda: (button.setEnabled(action.isEnabled()), button.setToolTip(action.toolTip())))
        return button

    # ---- reading the store -----------------------------------------------------------------------
    @Slot()
    def refresh(self) -> None:
        """Re-read the list (while shown) and the overlaid runs still recording."""
        try:
            store = self.link.store()
            if store is None:
                self._problem = None
                self.model.set_rows([])
                self._update_info()
                return
            if self.isVisible() or not self.model.rows:
                self.model.set_rows(store.list_runs())
            for run_id in list(self.overlay_feeds):
                self._feed_overlay(run_id)
        except StoreError as exc:
            self._problem = str(exc)
        else:
            self._problem = None
        self._update_info()
        self._update_buttons()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        self.refresh()  # the list may be a while old: the tab was hidden

    def _update_info(self) -> None:
        if self._problem:
            self.info.setText(f"<span style='color:#c62828'>{self._problem}</span>")
            return
        total, shown = len(self.model.rows), self.proxy.rowCount()
        if not self.link.path.exists():
            self.info.setText(f"No runs recorded yet in {self.link.path}: runs started here or with "
                              "`gpu-train-monitor run` appear as they start.")
            return
        live = sum(row.live for row in self.model.rows)
        counted = f"{shown} of {total} runs" if shown != total else f"{total} run{'s' if total != 1 else ''}"
        overlaid = len(self.overlays.ids())
        self.info.setText(f"{counted}" + (f", {live} live" if live else "")
                          + (f", {overlaid} overlaid on the plots" if overlaid else "")
                          + f" — {self.link.path}" + ("" if self.link.writable else " (read-only)"))

    # ---- selection -------------------------------------------------------------------------------
    def selected_ids(self) -> list[int]:
        """The selected runs, in the table's order."""
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.proxy.run_id(row) for row in rows]

    def select(self, run_id: int) -> None:
        """Select run `run_id` in the table (if the search shows it)."""
        for row in range(self.proxy.rowCount()):
            if self.proxy.run_id(row) == run_id:
                self.table.selectRow(row)
                return

    @Slot()
    def _update_buttons(self, *_: object) -> None:
        ids = self.selected_ids()
        rows = [row for row in (self.model.row_of(run_id) for run_id in ids) if row is not None]
        single = len(rows) == 1
        for action in (self.rename_action, self.note_action):
            action.setEnabled(single)
        live = [row for row in rows if row.live]
        self.delete_action.setEnabled(bool(rows) and not live)
        self.delete_action.setToolTip(f"Run {run_text(live[0])} is live: stop it before deleting it" if live
                                      else self.delete_action.statusTip())
        self.export_action.setEnabled(single)
        self.export_button.setEnabled(single)
        self.clear_overlays_action.setEnabled(bool(self.overlays.ids()))

    @Slot(object)
    def _on_double_clicked(self, index) -> None:
        if index.column() != OVERLAY_COLUMN:  # a double click on the box toggles it twice: no window
            self.open_run(self.proxy.run_id(index.row()))

    @Slot(QPoint)
    def _on_context_menu(self, position: QPoint) -> None:
        if not self.selected_ids():
            return
        menu = QMenu(self)
        menu.addAction(self.open_action)
        ids = self.selected_ids()
        overlaid = all(run_id in self.model.overlaid for run_id in ids)
        toggle = menu.addAction("Remove overlay" if overlaid else "Overlay on the live plots")
        toggle.triggered.connect(lambda: [self.set_overlay(run_id, not overlaid) for run_id in ids])
        menu.addSeparator()
        for action in (self.rename_action, self.note_action, self.export_action):
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(self.delete_action)
        menu.popup(self.table.viewport().mapToGlobal(position))

    # ---- opening and overlaying ------------------------------------------------------------------
    @Slot()
    def open_selected(self) -> None:
        """Open the selected runs; with none selected (the File menu), show the list to pick from."""
        ids = self.selected_ids()
        if not ids or not self.isVisible():
            self.reveal()
            return
        for run_id in ids:
            self.open_run(run_id)

    def reveal(self) -> None:
        """Bring the Runs tab to the front and put the keyboard in the table."""
        stack = self.parentWidget()
        tabs = stack.parentWidget() if stack is not None else None
        if isinstance(tabs, QTabWidget):
            tabs.setCurrentWidget(self)
        self.table.setFocus()

    def open_run(self, run_id: int) -> StoredRunView:
        """Run `run_id` in a window of its own (the one already open, raised)."""
        view = self.views.get(run_id)
        if view is None:
            view = StoredRunView(self.link, run_id, self.model.row_of(run_id), self)
            view.closed.connect(self._on_view_closed)
            self.views[run_id] = view
        view.show()
        view.raise_()
        view.activateWindow()
        return view

    @Slot(int)
    def _on_view_closed(self, run_id: int) -> None:
        view = self.views.pop(run_id, None)
        if view is not None:
            view.deleteLater()

    @Slot(int, bool)
    def set_overlay(self, run_id: int, on: bool) -> None:
        """Lay run `run_id` over the live plots (its data read now, more as it records), or take it off."""
        if not on:
            self.overlays.remove(run_id)
            self.overlay_feeds.pop(run_id, None)
        elif run_id not in self.overlays.ids():
            row = self.model.row_of(run_id)
            if row is None:
                return
            self.overlays.add(row)
            self.overlay_feeds[run_id] = RunFeed(run_id)
            try:
                self._feed_overlay(run_id)
            except StoreError as exc:
                self._problem = str(exc)
        self.model.set_overlaid(run_id, on and run_id in self.overlays.ids())
        self._update_info()
        self._update_buttons()

    def _feed_overlay(self, run_id: int) -> None:
        """What run `run_id` recorded since its overlay's last read; a finished run's feed is dropped."""
        feed = self.overlay_feeds[run_id]
        store = self.link.store()
        if store is None:
            return
        try:
            update = feed.poll(store)
        except UserError as exc:  # RunNotFound: deleted elsewhere (the CLI's `runs delete`)
            if isinstance(exc, StoreError):
                raise
            self.set_overlay(run_id, False)
            return
        if update.restarted:
            self.overlays.reset(run_id)
        self.overlays.extend(run_id, update.steps, update.reports, update.row.started_at)
        if update.finished:
            del self.overlay_feeds[run_id]

    @Slot()
    def clear_overlays(self) -> None:
        for run_id in self.overlays.ids():
            self.set_overlay(run_id, False)

    # ---- editing ---------------------------------------------------------------------------------
    def _single(self) -> RunRow | None:
        ids = self.selected_ids()
        return self.model.row_of(ids[0]) if len(ids) == 1 else None

    @Slot()
    def rename_selected(self) -> None:
        row = self._single()
        if row is None:
            return
        name, ok = QInputDialog.getText(self, "Rename run", f"Name of run #{row.id} (empty: no name):", text=row.name)
        if ok:
            self.rename(row.id, name)

    @Slot()
    def note_selected(self) -> None:
        row = self._single()
        if row is None:
            return
        note, ok = QInputDialog.getMultiLineText(self, "Note on run", f"Note on run {run_text(row)}:", row.note)
        if ok:
            self.annotate(row.id, note)

    def rename(self, run_id: int, name: str) -> bool:
        return self._edit(lambda store: store.rename(run_id, name))

    def annotate(self, run_id: int, note: str) -> bool:
        return self._edit(lambda store: store.annotate(run_id, note))

    def _edit(self, change) -> bool:
        """Apply `change(store)`, then show the list as it now is; a problem is shown, not raised."""
        try:
            change(self.link.writable_store())
        except UserError as exc:
            self._problem = str(exc)
            self._update_info()
            return False
        self.refresh()
        for view in self.views.values():  # a name or note shows in an opened run's header
            view.poll()
        return True

    @Slot()
    def delete_selected(self) -> None:
        """Ask, naming the runs, then delete them; a live run is refused (it is still being written)."""
        rows = [row for row in (self.model.row_of(run_id) for run_id in self.selected_ids()) if row is not None]
        if not rows:
            return
        live = [row for row in rows if row.live]
        if live:
            self._problem = f"run {run_text(live[0])} is live: stop it where it runs before deleting it"
            self._update_info()
            return
        if len(rows) == 1:
            row = rows[0]
            what = (f"run {run_text(row)} ({row.model} on {row.device}, {when_text(row.started_at)}, "
                    f"{status_text(row)}, {row.steps:,} steps)")
        else:
            what = f"{len(rows)} runs ({', '.join(run_text(row) for row in rows)})"
        answer = QMessageBox.question(self, "Delete run" if len(rows) == 1 else "Delete runs",
                                      f"Delete {what} and everything recorded for {'it' if len(rows) == 1 else 'them'}? "
                                      "This cannot be undone.",
                                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                                      QMessageBox.StandardButton.Cancel)
        if answer != QMessageBox.StandardButton.Yes:
            return
        for row in rows:
            if not self.delete(row.id):
                return

    def delete(self, run_id: int) -> bool:
        """Delete run `run_id` (no question asked): its overlay and its window go with it."""
        row = self.model.row_of(run_id)
        if row is not None and row.live:
            self._problem = f"run {run_text(row)} is live: stop it where it runs before deleting it"
            self._update_info()
            return False
        self.set_overlay(run_id, False)
        view = self.views.get(run_id)
        if view is not None:
            view.close()
        return self._edit(lambda store: store.delete(run_id))

    # ---- export ----------------------------------------------------------------------------------
    def export_selected(self, fmt: str) -> None:
        """Ask where (a file for JSON, a folder otherwise), then export the selected run."""
        row = self._single()
        if row is None:
            return
        kind = next(kind for f, _, kind in EXPORTS if f == fmt)
        start = str(Path.home() / f"run-{row.id}.json") if kind == "file" else str(Path.home())
        if kind == "file":
            path, _ = QFileDialog.getSaveFileName(self, f"Export run #{row.id} as JSON", start, "JSON (*.json)")
        else:
            path = QFileDialog.getExistingDirectory(self, f"Export run #{row.id}: choose a folder", start)
        if path:
            self.export(row.id, fmt, path)

    def export(self, run_id: int, fmt: str, out: Path | str) -> list[Path]:
        """Export run `run_id` (`core.run_export`) at the live loss plot's smoothing; the files written."""
        from core.run_export import export_run

        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            store = self.link.store()
            if store is None:
                raise StoreError(f"no run store at {self.link.path} yet")
            written = export_run(store, run_id, fmt, out, smoothing=self.overlays.loss_plot.smoothing.value())
        except UserError as exc:
            self._problem = f"export failed: {exc}"
            self._update_info()
            return []
        finally:
            QApplication.restoreOverrideCursor()
        self._problem = None
        self._update_info()
        folder = written[0].parent if written else Path(out)
        self.message.emit(f"exported run {run_id} to {folder}: {', '.join(path.name for path in written)}")
        return written

    # ---- closing ---------------------------------------------------------------------------------
    def stop(self) -> None:
        """The window closes: stop polling, close the opened runs' windows and the store."""
        self.refresh_timer.stop()
        self.overlays.stop()
        for view in list(self.views.values()):
            view.close()
        self.link.close()
