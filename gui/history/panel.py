"""The Runs tab: every run recorded in the run store (this window's and those started elsewhere: a terminal,
tmux, a script), searchable and sortable; open one in a window of its own, overlay several on the live
plots, rename, annotate, export or delete them.

The table re-reads the store every `REFRESH_INTERVAL_MS` while it is shown (one small query), so a run
started in a terminal appears as *live* within a second and becomes completed, stopped or interrupted when
it ends; the selection and the scroll position survive the refresh. Overlays of a live run keep growing:
their feeds (`gpu_train_monitor.gui.history.overlay_feeds`) are polled on the same timer whether the tab is shown or
not. Every store problem (locked, read-only, damaged, deleted) is a line in the panel
(`gpu_train_monitor.gui.history.info_line`), never an exception.
"""

from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCore import QPoint, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QMenu, QPushButton, QTabWidget, QVBoxLayout, QWidget

from gpu_train_monitor.gui.history.checkpoints import RunResume
from gpu_train_monitor.gui.history.columns import ColumnFitter
from gpu_train_monitor.gui.history.edits import RunEdits
from gpu_train_monitor.gui.history.export_button import ExportButton
from gpu_train_monitor.gui.history.feed import StoreLink, mark_interrupted
from gpu_train_monitor.gui.history.info_line import NOTICE_S, HistoryInfo
from gpu_train_monitor.gui.history.overlay_feeds import OverlayFeeds
from gpu_train_monitor.gui.history.overlays import Overlays
from gpu_train_monitor.gui.history.row_text import elsewhere
from gpu_train_monitor.gui.history.run_window import StoredRunView
from gpu_train_monitor.gui.history.scripts import WatchedScripts
from gpu_train_monitor.gui.history.speeds import MedianSpeeds
from gpu_train_monitor.gui.history.table_model import KEYS, OVERLAY_COLUMN, RunHistoryModel
from gpu_train_monitor.gui.history.table_view import RunHistoryFilter, history_table
from gpu_train_monitor.gui.plots.loss_plot import LossPlot
from gpu_train_monitor.gui.plots.memory_plot import MemoryPlot
from gpu_train_monitor.gui.qt.core_text import error_text
from gpu_train_monitor.store.run_store import RunRow, StoreError

REFRESH_INTERVAL_MS = 1000


class HistoryPanel(QWidget):
    """Recorded runs in the store at `store_path`; overlays go on `loss_plot` and `memory_plot`."""

    message = Signal(str)  # what an action did ("exported run 12 to ..."), for the window's status bar
    # a checkpoint a run recorded, picked to resume from (`gpu_train_monitor.gui.history.checkpoints`)
    resume_requested = Signal(str)
    run_window_opened = Signal(object)  # a run's window just made (the main window keeps its texts in the language)

    def __init__(
        self, store_path: Path | str, loss_plot: LossPlot, memory_plot: MemoryPlot, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.link = StoreLink(store_path)
        self.model = RunHistoryModel(self)
        self.proxy = RunHistoryFilter(self.model, self)
        self.overlays = Overlays(loss_plot, memory_plot, self)
        self.feeds = OverlayFeeds(self.link, self.overlays, self)
        self.feeds.dropped.connect(self._on_overlay_dropped)
        self.views: dict[int, StoredRunView] = {}
        self.speeds = MedianSpeeds()  # the images/s of runs without a summary yet: their reports' median
        self.scripts = WatchedScripts()  # the scripts of watched runs, read from their configs once
        self._reconnecting: str | None = None  # the machine whose connection dropped (its runs' windows say so)
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
        self.search.setPlaceholderText(self.tr("Search runs: name, note, model, dataset, device, status or #id"))
        self.search.setMinimumWidth(220)
        self.search.textChanged.connect(self.proxy.set_search)
        self.search.textChanged.connect(self._update_info)

        self.table = history_table(self.proxy)
        self.columns = ColumnFitter(self.table, KEYS.index("run"), KEYS.index("note"))
        self.table.doubleClicked.connect(self._on_double_clicked)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._on_context_menu)
        self.table.selectionModel().selectionChanged.connect(self._update_buttons)

        self.open_action = QAction(self.tr("Open run…"), self)
        self.open_action.setStatusTip(
            self.tr(
                "Open the selected runs, each in a window of its own (a live run is "
                "followed as it trains); with none selected, show the list of runs"
            )
        )
        self.open_action.setToolTip(self.open_action.statusTip())
        self.open_action.triggered.connect(self.open_selected)
        self.edits = RunEdits(
            self.link, self.selected_rows, self.overlays.loss_plot.smoothing.value, self._before_delete, self
        )
        self.edits.edited.connect(self._on_edited)
        self.edits.problem.connect(self.show_problem)
        self.edits.message.connect(self._on_message)
        self.edits.exporting.connect(lambda text: self._on_message(text, math.inf))  # shown until it ends
        self.rename_action, self.note_action = self.edits.rename_action, self.edits.note_action
        self.delete_action, self.export_action = self.edits.delete_action, self.edits.export_action
        self.table.addAction(self.delete_action)
        self.resumer = RunResume(self.link.store, self.selected_rows, self)
        self.resumer.chosen.connect(self.resume_requested)
        self.resumer.problem.connect(self.show_problem)
        self.resume_action = self.resumer.action
        self.clear_overlays_action = QAction(self.tr("Clear overlays"), self)
        self.clear_overlays_action.setToolTip(self.tr("Take every overlaid run off the live plots"))
        self.clear_overlays_action.triggered.connect(self.clear_overlays)

        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.search, 1)
        self.export_button = ExportButton(self.export_action, self.edits.export_menu)
        for action in (self.open_action, self.rename_action, self.note_action):
            buttons.addWidget(self._button(action, self.tr("Open") if action is self.open_action else None))
        buttons.addWidget(self.export_button)
        buttons.addWidget(self._button(self.resume_action, self.tr("Resume…")))  # short: the row sets the tab's width
        for action in (self.delete_action, self.clear_overlays_action):
            buttons.addWidget(self._button(action))
        self.info = HistoryInfo(self.link)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(buttons)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.info)
        self._update_buttons()

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
                self.info.store_problem = None
                self.model.set_rows([])
                self._update_info()
                return
            if self.isVisible() or not self.model.rows:
                rows = store.list_runs()
                if any(row.status == "running" and not row.live for row in rows) and not store.readonly:
                    mark_interrupted(store)  # its process is gone (killed, crashed): say so now, not at the next start
                    rows = store.list_runs()
                self.model.scripts = self.scripts.update(store, rows)
                self.model.set_rows(self.speeds.apply(store, rows))
                # the Host column once it tells runs apart: some trained on another machine (copied from it)
                self.table.setColumnHidden(KEYS.index("host"), not any(elsewhere(row) for row in rows))
                for run_id in self.overlays.ids():
                    if self.model.row_of(run_id) is None:  # deleted elsewhere (`gpu-train-monitor runs delete`)
                        self.set_overlay(run_id, False)
            self.feeds.poll()
        except StoreError as exc:
            self.info.store_problem = error_text(exc)
        else:
            self.info.store_problem = None
        self._update_info()
        self._update_buttons()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        self.refresh()  # the list may be a while old: the tab was hidden

    def _update_info(self) -> None:
        self.info.show_counts(
            len(self.model.rows),
            self.proxy.rowCount(),
            sum(row.live for row in self.model.rows),
            len(self.overlays.ids()),
        )

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

    def selected_rows(self) -> list[RunRow]:
        return [row for row in (self.model.row_of(run_id) for run_id in self.selected_ids()) if row is not None]

    @Slot()
    def _update_buttons(self, *_: object) -> None:
        self.edits.update_for(self.selected_rows())
        self.resumer.update_for(self.selected_rows())
        self.export_button.follow()
        self.clear_overlays_action.setEnabled(bool(self.overlays.ids()))

    def set_can_start(self, can_start: bool) -> None:
        """Whether the window can start a run now: Resume from checkpoint… follows it."""
        self.resumer.can_start = can_start
        self.resumer.update_for(self.selected_rows())

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
        toggle = menu.addAction(self.tr("Remove overlay") if overlaid else self.tr("Overlay on the live plots"))
        toggle.triggered.connect(lambda: [self.set_overlay(run_id, not overlaid) for run_id in ids])
        menu.addSeparator()
        for action in (self.resume_action, self.rename_action, self.note_action, self.export_action):
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
            view.connection_dropped(self._reconnecting)
            self.views[run_id] = view
            self.run_window_opened.emit(view)
        view.show()
        view.raise_()
        view.activateWindow()
        return view

    def connection_dropped(self, host: str | None) -> None:
        """The window's connection to `host` dropped and is reconnecting (None: none is down): the opened windows
        of runs copied from that machine say so, rather than show them ended for want of news."""
        self._reconnecting = host
        for view in self.views.values():
            view.connection_dropped(host)

    @Slot(int)
    def _on_view_closed(self, run_id: int) -> None:
        view = self.views.pop(run_id, None)
        if view is not None:
            view.deleteLater()

    @Slot(int, bool)
    def set_overlay(self, run_id: int, on: bool) -> None:
        """Lay run `run_id` over the live plots (read in the background, then as it records), or take it off."""
        row = self.model.row_of(run_id)
        if on and row is not None:
            self.feeds.add(row)
        elif not on:
            self.feeds.remove(run_id)
        self.model.set_overlaid(run_id, run_id in self.overlays.ids())
        self._update_info()
        self._update_buttons()

    @Slot(int, str)
    def _on_overlay_dropped(self, run_id: int, why: str) -> None:
        self.model.set_overlaid(run_id, False)
        if why:
            self.show_problem(self.tr("run {run_id} could not be overlaid: {why}").format(run_id=run_id, why=why))
        self._update_info()
        self._update_buttons()

    @Slot()
    def clear_overlays(self) -> None:
        for run_id in self.overlays.ids():
            self.set_overlay(run_id, False)

    # ---- after an edit ----------------------------------------------------------------------------
    def _before_delete(self, run_id: int) -> None:
        """A run is about to be deleted: its overlay and its window go first."""
        self.set_overlay(run_id, False)
        view = self.views.get(run_id)
        if view is not None:
            view.close()

    @Slot()
    def _on_edited(self) -> None:
        self.info.forget_notice()
        self.refresh()
        for view in self.views.values():  # a new name or note shows in an opened run's header
            view.poll()

    @Slot(str)
    def show_problem(self, text: str) -> None:
        """Why an action could not be done, in the panel's info line for `NOTICE_S` (refreshes keep it)."""
        self.info.notice(text, error=True)
        self._update_info()

    def _on_message(self, text: str, seconds: float = NOTICE_S) -> None:
        self.info.notice(text, error=False, seconds=seconds)
        self._update_info()
        self.message.emit(text)

    # ---- closing ---------------------------------------------------------------------------------
    def stop(self) -> None:
        """The window closes: stop polling, cancel an export, close the opened runs' windows and the store."""
        self.refresh_timer.stop()
        self.feeds.stop()
        self.edits.stop()
        for view in list(self.views.values()):
            view.close()
        self.link.close()
