"""The Runs tab's Resume from checkpoint…: a recorded run's checkpoints listed by step, one picked, resumed as
File ▸ Resume from checkpoint… resumes a file (the window asks how long it goes on).

Checkpoint folders are named by the run's 32-character uid, so finding a run's files by hand means matching
uids; the store knows which checkpoints each run saved (its CheckpointSaved events), and where. A file
deleted or moved since is left out of the list; a run with none left says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QObject, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QInputDialog, QWidget

from gpu_train_monitor.gui.history.row_text import run_text
from gpu_train_monitor.gui.qt.core_text import error_text
from gpu_train_monitor.gui.qt.locale_format import integer
from gpu_train_monitor.store.run_store import RunRow, RunStore, StoreError

# why each checkpoint was saved (CheckpointSaved.reason), as the list says it
REASONS = {
    "epoch": QT_TRANSLATE_NOOP("run_checkpoints", "end of epoch {epoch}"),
    "every": QT_TRANSLATE_NOOP("run_checkpoints", "during epoch {epoch}"),
    "request": QT_TRANSLATE_NOOP("run_checkpoints", "asked for, during epoch {epoch}"),
    "stop": QT_TRANSLATE_NOOP("run_checkpoints", "stopped during epoch {epoch}"),
    "end": QT_TRANSLATE_NOOP("run_checkpoints", "last step, during epoch {epoch}"),
}


@dataclass(frozen=True)
class RecordedCheckpoint:
    step: int
    epoch: int
    reason: str
    path: str

    @property
    def text(self) -> str:
        """'step 120 (end of epoch 3): step-120.pt', in the user's language."""
        reason = REASONS.get(self.reason, "{epoch}")
        why = QCoreApplication.translate("run_checkpoints", reason).format(epoch=integer(self.epoch))
        return QCoreApplication.translate("run_checkpoints", "step {step} ({why}): {file}").format(
            step=integer(self.step), why=why, file=Path(self.path).name
        )


def recorded_checkpoints(store: RunStore, run_id: int) -> tuple[list[RecordedCheckpoint], int]:
    """The run's checkpoints whose files are still there, latest step first (one per file: a later save to
    the same path replaced it); and how many it recorded in all."""
    by_path: dict[str, RecordedCheckpoint] = {}
    events = store.events(run_id, kinds=("CheckpointSaved",))
    for event in events:
        data = event.data
        by_path[str(data["path"])] = RecordedCheckpoint(
            int(data["step"]), int(data.get("epoch", 0)), str(data.get("reason", "")), str(data["path"])
        )
    there = [checkpoint for checkpoint in by_path.values() if Path(checkpoint.path).is_file()]
    return sorted(there, key=lambda checkpoint: checkpoint.step, reverse=True), len(events)


class RunResume(QObject):
    """The action on the run `selected()` returns; `chosen(path)` when a checkpoint was picked, `problem(text)`
    when there is none to pick."""

    chosen = Signal(str)
    problem = Signal(str)

    def __init__(
        self, store: Callable[[], RunStore | None], selected: Callable[[], list[RunRow]], parent: QWidget
    ) -> None:
        super().__init__(parent)
        self._parent, self._store, self._selected = parent, store, selected
        self.can_start = True  # the window can start a run now (none under way, torch loaded)
        self.action = QAction(self.tr("Resume from checkpoint…"), parent)
        self.action.setStatusTip(
            self.tr("Continue the selected run from one of the checkpoints it saved, listed by step")
        )
        self.action.triggered.connect(self.pick)
        self.update_for([])

    def update_for(self, rows: list[RunRow]) -> None:
        """One run that is not training any more, while the window can start one."""
        one = len(rows) == 1 and not rows[0].live
        self.action.setEnabled(one and self.can_start)
        if not self.can_start:
            self.action.setToolTip(self.tr("Not while a run or a batch-size search is under way"))
        elif len(rows) == 1 and rows[0].live:
            self.action.setToolTip(self.tr("run {run} is still training").format(run=run_text(rows[0])))
        else:
            self.action.setToolTip(self.action.statusTip())

    def checkpoints(self, run_id: int) -> tuple[list[RecordedCheckpoint], int]:
        store = self._store()
        return recorded_checkpoints(store, run_id) if store is not None else ([], 0)

    @Slot()
    def pick(self) -> None:
        """List the selected run's checkpoints and emit `chosen` with the one picked."""
        rows = self._selected()
        if len(rows) != 1:
            return
        row = rows[0]
        try:
            found, recorded = self.checkpoints(row.id)
        except StoreError as exc:  # a line in the panel, never a traceback
            self.problem.emit(
                self.tr("cannot list run {run}'s checkpoints: {error}").format(run=run_text(row), error=error_text(exc))
            )
            return
        if not found:
            self.problem.emit(
                self.tr("run {run} saved no checkpoint to resume from").format(run=run_text(row))
                if not recorded
                else self.tr("run {run}'s {count} checkpoints are gone (deleted or moved)").format(
                    run=run_text(row), count=integer(recorded)
                )
            )
            return
        texts = [checkpoint.text for checkpoint in found]
        text, ok = QInputDialog.getItem(
            self._parent,
            self.tr("Resume run {run}").format(run=run_text(row)),
            self.tr("Resume from the checkpoint saved at:"),
            texts,
            0,
            False,
        )
        if ok and text in texts:
            self.chosen.emit(found[texts.index(text)].path)
