"""What people change in the history afterwards: rename a run, write a note on it, export it, delete it.

The actions (for the Runs tab's buttons, its context menu and the File menu), their dialogs, and the store
edits behind them. A run still training is never deleted (its process is still writing it); a delete asks
first, naming the run. An export runs in the background (`gpu_train_monitor.gui.history.exporter`), one at a time: while
it runs the export actions are disabled and a second export is refused, not queued (the one under way says where
its files go; the next is chosen once it is done). Every failure (a read-only or locked store, a folder that
cannot be written, a run deleted meanwhile) is reported through `problem` as one sentence, never raised.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QObject, Qt, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QInputDialog, QMenu, QMessageBox, QWidget

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.gui.history.exporter import ExportJob, ExportResult, RunExporter
from gpu_train_monitor.gui.history.feed import StoreLink
from gpu_train_monitor.gui.history.row_text import run_text, state_text, when_text
from gpu_train_monitor.gui.qt import file_dialogs
from gpu_train_monitor.gui.qt.core_text import error_text
from gpu_train_monitor.gui.qt.locale_format import integer
from gpu_train_monitor.store.run_store import RunRow, RunStore

# (format, menu text (English: shown through the translator, context "run_edits"), what the dialog asks for)
EXPORTS = (
    ("json", QT_TRANSLATE_NOOP("run_edits", "JSON document…"), "file"),
    ("csv", QT_TRANSLATE_NOOP("run_edits", "CSV files (steps, memory)…"), "folder"),
    ("tensorboard", QT_TRANSLATE_NOOP("run_edits", "TensorBoard log dir…"), "folder"),
)


def live_refusal(row: RunRow) -> str:
    return QCoreApplication.translate(
        "run_edits", "run {run} is live: stop it where it runs before deleting it"
    ).format(run=run_text(row))


class RunEdits(QObject):
    """The edit actions on the runs `selected()` returns, made in the store of `link`."""

    edited = Signal()  # the store changed: show it as it is now
    problem = Signal(str)  # why an edit or an export could not be made
    message = Signal(str)  # what an export wrote
    exporting = Signal(str)  # "exporting run 12 as CSV…": an export started (`message` or `problem` ends it)

    def __init__(
        self,
        link: StoreLink,
        selected: Callable[[], list[RunRow]],
        smoothing: Callable[[], float],
        before_delete: Callable[[int], None],
        parent: QWidget,
    ) -> None:
        """`smoothing`: the EMA weight exports use (the live loss plot's); `before_delete(run_id)` lets the
        history take the run's overlay and window away first."""
        super().__init__(parent)
        self._parent = parent
        self.link, self._selected, self._smoothing, self._before_delete = link, selected, smoothing, before_delete
        self.rename_action = self._action(
            self.tr("Rename…"), self.rename_selected, self.tr("Give the selected run a name")
        )
        self.note_action = self._action(
            self.tr("Note…"), self.note_selected, self.tr("Write a note on the selected run")
        )
        self.delete_action = self._action(
            self.tr("Delete…"),
            self.delete_selected,
            self.tr("Delete the selected runs and everything recorded for them (asks first)"),
        )
        self.delete_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)  # in the table only
        self.export_menu = QMenu(self.tr("Export run"), parent)
        for fmt, text, _ in EXPORTS:
            action = self.export_menu.addAction(QCoreApplication.translate("run_edits", text))
            action.triggered.connect(lambda _=False, f=fmt: self.export_selected(f))
        self.export_action = self.export_menu.menuAction()
        self.export_action.setStatusTip(self.tr("Export the selected run as JSON, CSV or a TensorBoard log dir"))
        self.exporter = RunExporter(link.path, self)
        self.exporter.exported.connect(self._on_exported)
        self.exporter.failed.connect(self._on_export_failed)
        self.exporter.ended.connect(lambda: self.update_for(self._selected()))
        self.update_for([])

    def _action(self, text: str, slot: Callable[[], None], tip: str) -> QAction:
        action = QAction(text, self._parent)
        action.setStatusTip(tip)
        action.setToolTip(tip)
        action.triggered.connect(slot)
        return action

    def update_for(self, rows: list[RunRow]) -> None:
        """Enable what applies to the selection: one run to rename, note or export (while no export runs); no
        live run to delete."""
        for action in (self.rename_action, self.note_action):
            action.setEnabled(len(rows) == 1)
        under_way = self.exporter.job
        self.export_action.setEnabled(len(rows) == 1 and under_way is None)
        self.export_action.setToolTip(
            self.export_action.statusTip()
            if under_way is None
            else self.tr("exporting {what}…: one export at a time").format(what=under_way.what)
        )
        live = [row for row in rows if row.live]
        self.delete_action.setEnabled(bool(rows) and not live)
        self.delete_action.setToolTip(live_refusal(live[0]) if live else self.delete_action.statusTip())

    def _single(self) -> RunRow | None:
        rows = self._selected()
        return rows[0] if len(rows) == 1 else None

    # ---- name and note ---------------------------------------------------------------------------
    @Slot()
    def rename_selected(self) -> None:
        row = self._single()
        if row is None:
            return
        name, ok = QInputDialog.getText(
            self._parent,
            self.tr("Rename run"),
            self.tr("Name of run #{id} (empty: no name):").format(id=row.id),
            text=row.name,
        )
        if ok:
            self.rename(row.id, name)

    @Slot()
    def note_selected(self) -> None:
        row = self._single()
        if row is None:
            return
        note, ok = QInputDialog.getMultiLineText(
            self._parent, self.tr("Note on run"), self.tr("Note on run {run}:").format(run=run_text(row)), row.note
        )
        if ok:
            self.annotate(row.id, note)

    def rename(self, run_id: int, name: str) -> bool:
        return self._edit(lambda store: store.rename(run_id, name))

    def annotate(self, run_id: int, note: str) -> bool:
        return self._edit(lambda store: store.annotate(run_id, note))

    def _edit(self, change: Callable[[RunStore], None]) -> bool:
        """Apply `change` to the store; a problem is reported, not raised."""
        try:
            change(self.link.writable_store())
        except UserError as exc:
            self.problem.emit(error_text(exc))
            return False
        self.edited.emit()
        return True

    # ---- delete ----------------------------------------------------------------------------------
    @Slot()
    def delete_selected(self) -> None:
        """Ask, naming the runs, then delete them; a live run is refused (it is still being written)."""
        rows = self._selected()
        if not rows:
            return
        live = [row for row in rows if row.live]
        if live:
            self.problem.emit(live_refusal(live[0]))
            return
        answer = QMessageBox.question(
            self._parent,
            self.tr("Delete run") if len(rows) == 1 else self.tr("Delete runs"),
            self._delete_question(rows),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Yes:
            for row in rows:
                if not self.delete(row.id):
                    return

    def _delete_question(self, rows: list[RunRow]) -> str:
        """The question before a delete, naming the run (what, where, when, how it ended) or the runs."""
        if len(rows) == 1:
            row = rows[0]
            return self.tr(
                "Delete run {run} ({model} on {device}, {when}, {status}, {steps} steps) and everything "
                "recorded for it? This cannot be undone."
            ).format(
                run=run_text(row),
                model=row.model,
                device=row.device,
                when=when_text(row.started_at),
                status=state_text(row),
                steps=integer(row.steps),
            )
        return self.tr("Delete {count} runs ({runs}) and everything recorded for them? This cannot be undone.").format(
            count=integer(len(rows)), runs=", ".join(run_text(row) for row in rows)
        )

    def delete(self, run_id: int) -> bool:
        """Delete run `run_id` without asking, unless it is live (checked in the store, now)."""

        def change(store: RunStore) -> None:
            row = store.run(run_id)
            if row.live:
                raise UserError(live_refusal(row))
            self._before_delete(run_id)
            store.delete(run_id)

        return self._edit(change)

    # ---- export ----------------------------------------------------------------------------------
    def export_selected(self, fmt: str) -> None:
        """Ask where (a file for JSON, a folder otherwise), then export the selected run."""
        row = self._single()
        if row is None:
            return
        if next(kind for f, _, kind in EXPORTS if f == fmt) == "file":
            path, _ = file_dialogs.get_save_file_name(
                self._parent,
                self.tr("Export run #{id} as JSON").format(id=row.id),
                str(Path.home() / f"run-{row.id}.json"),
                "JSON (*.json)",
            )
        else:
            path = file_dialogs.get_existing_directory(
                self._parent, self.tr("Export run #{id}: choose a folder").format(id=row.id), str(Path.home())
            )
        if path:
            self.export(row.id, fmt, path)

    def export(self, run_id: int, fmt: str, out: Path | str) -> bool:
        """Start exporting run `run_id` (`gpu_train_monitor.export.run_export`) in the background at the live loss
        plot's smoothing; False (and why, through `problem`) when another export is still under way."""
        under_way = self.exporter.job
        if under_way is not None:
            self.problem.emit(
                self.tr("still exporting {what}: one export at a time, try again when it is done").format(
                    what=under_way.what
                )
            )
            return False
        job = ExportJob(run_id, fmt, os.fspath(out), self._smoothing())
        self.exporter.start(job)
        self.update_for(self._selected())
        self.exporting.emit(self.tr("exporting {what}…").format(what=job.what))
        return True

    @Slot(object)
    def _on_exported(self, result: ExportResult) -> None:
        files = ", ".join(path.name for path in result.written)
        if result.partial_step is not None:  # a live run goes on training after its export
            self.message.emit(
                self.tr(
                    "exported run {run_id} to {folder}: {files} (partial: the run is live, exported up to step {step})"
                ).format(run_id=result.job.run_id, folder=result.folder, files=files, step=integer(result.partial_step))
            )
            return
        self.message.emit(
            self.tr("exported run {run_id} to {folder}: {files}").format(
                run_id=result.job.run_id, folder=result.folder, files=files
            )
        )

    @Slot(str)
    def _on_export_failed(self, why: str) -> None:
        self.problem.emit(self.tr("export failed: {why}").format(why=why))

    def stop(self) -> None:
        """The window closes: cancel an export under way and wait for its thread."""
        self.exporter.shutdown()
