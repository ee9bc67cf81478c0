"""File ▸ Resume from checkpoint…: pick a checkpoint, say how long the run goes on, and continue it.

The resumed run is the same run: its settings come from the checkpoint (the form shows them), its step
count goes on, and the loss plot first shows the steps the run store recorded before the checkpoint, so
the curve reads as one. A checkpoint that cannot be read or resumed is a message in the log and the
status bar; nothing starts. It is given the parts it acts on and asks the window to start the run through
`resume_requested`; it never reaches into the window.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QInputDialog, QWidget

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.config.bounds import BOUNDS
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.gui.plots.loss_plot import LossPlot
from gpu_train_monitor.gui.qt import file_dialogs
from gpu_train_monitor.gui.qt.core_text import choice_text, error_text
from gpu_train_monitor.gui.qt.locale_format import integer
from gpu_train_monitor.gui.views.log_panel import LogPanel

if TYPE_CHECKING:
    from gpu_train_monitor.engine.checkpoint_files import CheckpointInfo


class CheckpointResume(QObject):
    """The action and what it does; `resume(path, epochs)` is the same without the dialogs.

    `show_config(config)` shows the resumed run's settings (the form's `set_config`), `log` and `notify(text, ms)`
    (the status bar) say what happened, `store_path` is the run store (never taken for a checkpoint; its steps
    before the checkpoint go on `loss_plot`). `parent` is the dialogs' parent."""

    resume_requested = Signal(object, str)  # (RunConfig, checkpoint path): start it, or call `refuse` saying why not

    def __init__(
        self,
        show_config: Callable[[RunConfig], None],
        log: LogPanel,
        store_path: str | Path,
        loss_plot: LossPlot,
        notify: Callable[[str, int], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._show_config, self.log, self.store_path, self.loss_plot = show_config, log, store_path, loss_plot
        self._notify, self._dialog_parent = notify, parent
        self._refusal: str | None = None  # why the last resume_requested could not start, said through `refuse`
        self.action = QAction(self.tr("Resume from checkpoint…"), parent)
        self.action.setStatusTip(
            self.tr("Continue a run from a checkpoint it saved: the same run, its steps and curve go on")
        )
        self.action.triggered.connect(self._on_triggered)

    def update_for(self, can_start: bool) -> None:
        self.action.setEnabled(can_start)

    @Slot()
    def _on_triggered(self) -> None:
        from gpu_train_monitor.engine.checkpoint_files import default_dir

        folder = default_dir()
        path, _ = file_dialogs.get_open_file_name(
            self._dialog_parent,
            self.tr("Resume from checkpoint"),
            str(folder if folder.is_dir() else Path.home()),
            self.tr("Checkpoints (*.pt);;All files (*)"),
        )
        if path:
            self.resume_file(path)

    @Slot(str)
    def resume_file(self, path: str) -> None:
        """Ask how long the checkpoint at `path` goes on, then resume it (the File menu's file, or one the Runs
        tab lists for a run)."""
        from gpu_train_monitor.engine.checkpoint_files import read_info

        if self._is_store_file(path):  # reading it would open and close the store's file: SQLite's locks gone
            self.refuse(self.tr("{path} is a file of the run store, not a checkpoint").format(path=path))
            return
        try:
            info = read_info(path)
        except UserError as exc:
            self.refuse(error_text(exc))
            return
        epochs = self._ask_epochs(info)
        if epochs is not None:
            self.resume(path, epochs)

    def _ask_epochs(self, info: CheckpointInfo) -> int | None:
        from gpu_train_monitor.base.user_code import is_spec

        first, planned = resumable_epochs(info)
        values = dict(
            file=Path(info.path).name,
            model=choice_text("model", info.config.model),
            dataset=choice_text("dataset", info.config.dataset),
            step=integer(info.step),
            epoch=info.epoch,
        )
        if info.epoch_complete:
            saved = self.tr("{file}: {model} on {dataset}, saved at step {step} (after epoch {epoch}).")
        else:
            saved = self.tr("{file}: {model} on {dataset}, saved at step {step} (during epoch {epoch}).")
        lines = [saved.format(**values)]
        code = [spec for spec in (info.config.model, info.config.dataset) if is_spec(spec)]
        if code:
            warning = self.tr("Resuming imports and runs your code named in it: {code}.")
            lines.append(warning.format(code=", ".join(code)))
        lines.append(self.tr("Train up to epoch:"))
        value, ok = QInputDialog.getInt(
            self._dialog_parent,
            self.tr("Resume from checkpoint"),
            "\n".join(lines),
            planned,
            first,
            int(BOUNDS["epochs"].maximum),
        )
        return value if ok else None

    def resume(self, path: str, epochs: int) -> str | None:
        """Continue the checkpoint's run up to epoch `epochs`; returns why it could not start, else None."""
        from gpu_train_monitor.engine.checkpoint_files import read_info, resume_config

        try:
            info = read_info(path)
            config = resume_config(info, {"epochs": epochs, "max_steps": None})
            self._show_config(config)
        except UserError as exc:
            return self.refuse(error_text(exc))
        self._refusal = None
        self.resume_requested.emit(config, path)  # started at once (a direct connection), or refused through `refuse`
        if self._refusal is not None:
            return self._refusal
        self._show_earlier_steps(info)  # after the start, which clears the plot
        return None

    def _is_store_file(self, path: str) -> bool:
        from gpu_train_monitor.base.outputs import STORE_COMPANIONS, same_file

        store = str(self.store_path)
        return any(same_file(path, store + suffix) for suffix in ("", *STORE_COMPANIONS))

    def refuse(self, message: str) -> str:
        """Say that the checkpoint cannot be resumed and why (`message`, translated); returns `message`."""
        self._refusal = message
        text = self.tr("cannot resume: {reason}").format(reason=message)
        self.log.add(text, "error")
        self._notify(text, 15_000)
        return message

    def _show_earlier_steps(self, info: CheckpointInfo) -> None:
        """The recorded steps up to the checkpoint, so the resumed curve continues the old one."""
        from gpu_train_monitor.store.run_store import RunStore, StoreError

        try:
            with RunStore(self.store_path, readonly=True) as store:
                run_id = store.find_uid(info.run_uid)
                if run_id is None:
                    return
                series = store.steps(run_id)
                epochs = store.events(run_id, kinds=("EpochEnded",))
        except StoreError as exc:
            self.log.add(
                self.tr("the run's earlier steps are not shown: {error}").format(error=error_text(exc)), "warning"
            )
            return
        plot, start, chunk = self.loss_plot, None, []
        for step, loss in zip(series.steps, series.losses):
            if step > info.step:
                break
            if chunk and step != start + len(chunk):  # a gap: plot what is contiguous
                plot.add_losses(start, tuple(chunk))
                chunk = []
            if not chunk:
                start = step
            chunk.append(loss)
        if chunk:
            plot.add_losses(start, tuple(chunk))
        for event in epochs:
            if event.step is not None and event.step <= info.step:
                plot.add_epoch_end(
                    event.data["epoch"], event.step, event.data.get("val_accuracy"), event.data.get("complete", True)
                )
        if series.steps:
            self.log.add(
                self.tr(
                    "the loss plot shows run {run}'s {steps} recorded steps before the checkpoint, "
                    "then the resumed ones"
                ).format(run=run_id, steps=integer(min(info.step, len(series.steps))))
            )


def resumable_epochs(info: CheckpointInfo) -> tuple[int, int]:
    """(the fewest epochs a resume can train up to, the default offered: the run's own plan when it has
    steps left, else one more epoch)."""
    first = info.epoch + 1 if info.epoch_complete else info.epoch
    planned = info.config.epochs or first
    return first, max(planned, first)
