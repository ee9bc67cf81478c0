"""The window's side of a data-parallel run (`gpu_train_monitor.gui.launch.launcher` starts and follows its processes):
what the log says, the recorded run opened in the Runs tab and followed live in its own window, the window's state as
the run records a pause, a resume and its end, and closing the window mid-run behind a short modal
"Stopping N processes…" that waits (responsive) for the processes to end and then kills what is left.
Its log lines are `gpu_train_monitor.gui.launch.texts`'s.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtWidgets import QProgressDialog, QTabWidget, QWidget

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.events.status import Status
from gpu_train_monitor.gui.history.panel import HistoryPanel
from gpu_train_monitor.gui.launch.launcher import RankLauncher
from gpu_train_monitor.gui.launch.texts import (
    LaunchEnd,
    end_text,
    output_text,
    paused_text,
    recording_text,
    remote_end_text,
    remote_starting_text,
    remote_watching_text,
    script_output_text,
    starting_text,
    stopping_text,
    watching_text,
)
from gpu_train_monitor.gui.launch.watch_command import WatchRequest
from gpu_train_monitor.gui.run.launched_feed import LaunchedFeed
from gpu_train_monitor.gui.views.log_panel import LogPanel
from gpu_train_monitor.gui.views.run_view import RunView
from gpu_train_monitor.gui.views.window_state import WindowState
from gpu_train_monitor.store.run_store import RunNotFound, StoreError


def final_state(status: str) -> WindowState:
    """The window's state after a run that ended `status` (a run killed before its end reads failed)."""
    try:
        return WindowState.after(status)
    except ValueError:
        return WindowState.FAILED


def recorded_device_kind(history: HistoryPanel, run_id: int) -> str:
    """The kind of device run `run_id` trains on ("cuda", "mps", "cpu"), as recorded; "" when unreadable."""
    try:
        store = history.link.store()
        return store.run(run_id).device.split(":")[0] if store is not None else ""
    except (StoreError, RunNotFound):
        return ""


class LaunchedRun(QObject):
    """Connects a `RankLauncher` to the window: `set_state` and `state` are the window's run state, `finished`
    is called with the final state once nothing of the run is left."""

    def __init__(
        self,
        launcher: RankLauncher,
        log: LogPanel,
        history: HistoryPanel,
        tabs: QTabWidget,
        state: Callable[[], WindowState],
        set_state: Callable[[WindowState], None],
        finished: Callable[[WindowState], None],
        parent: QObject | None = None,
        view: RunView | None = None,
    ) -> None:
        super().__init__(parent)
        self.launcher, self.log, self.history, self.tabs = launcher, log, history, tabs
        # the window's own plots and numbers, read back from the store as the run records
        self.feed = LaunchedFeed(view, history.link, self) if view is not None else None
        self._state, self._set_state, self._finished = state, set_state, finished
        self.nproc, self.gpus = 0, False  # how many processes the run has, and whether they are GPUs
        self.script = False  # a watched script (File ▸ Watch a script…), not a run of the form's settings
        self.device_kind = ""  # a watched script's device kind ("cuda", "cpu"), once its run is recorded
        self.closing_dialog: QProgressDialog | None = None  # shown while the window waits for the processes
        launcher.run_found.connect(self._on_found)
        launcher.paused_changed.connect(self._on_paused_changed)
        launcher.stopping.connect(self._on_stopping)
        launcher.ended.connect(self._on_ended)

    def started(self, config: RunConfig, kind: str) -> None:
        self.nproc, self.gpus, self.script = config.nproc, kind == "cuda", False
        machine = self.launcher.machine
        if machine is not None:  # on the machine connected to: closing says "Stopping the run…"
            self.nproc = 0
            self.log.add(remote_starting_text(machine.host, config.device, self.launcher.log_path))
            return
        self.log.add(starting_text(config.nproc, self.gpus, config.batch_size, self.launcher.log_path))

    def watching(self, request: WatchRequest) -> None:
        """A watched script has started: its output is kept whatever its end (it is the user's own)."""
        self.nproc, self.gpus, self.script, self.device_kind = 0, False, True, ""
        if self.launcher.machine is not None:
            self.log.add(
                remote_watching_text(request.script.strip(), self.launcher.machine.host, self.launcher.log_path)
            )
            return
        self.log.add(watching_text(request.script_path, request.working_folder, self.launcher.log_path))

    @Slot(int)
    def _on_found(self, run_id: int) -> None:
        self.log.add(recording_text(run_id, None if self.script else self.launcher.found_after_s))
        if self.script:
            self.device_kind = recorded_device_kind(self.history, run_id)
        if self.feed is not None:
            self.feed.follow(run_id)
        if self._state() is WindowState.STARTING:
            self._set_state(WindowState.RUNNING)
        self.history.refresh()
        self.tabs.setCurrentWidget(self.history)
        self.history.select(run_id)
        self.history.open_run(run_id).controlled_by(self.launcher)  # its window steers it: not 'read-only here'

    @Slot(bool)
    def _on_paused_changed(self, paused: bool) -> None:
        if self._state() in (WindowState.RUNNING, WindowState.PAUSED):
            self._set_state(WindowState.PAUSED if paused else WindowState.RUNNING)
            self.log.add(paused_text(self.launcher.run_id, paused))

    @Slot()
    def _on_stopping(self) -> None:
        self._set_state(WindowState.FINISHING)  # recorded its end; its processes are exiting

    @Slot(object)
    def _on_ended(self, end: LaunchEnd) -> None:
        if self.feed is not None:
            self.feed.finish()
        status = Status.of(end.status)
        ended_well = status is not None and status.ended_well
        machine = self.launcher.machine
        remote = remote_end_text(end, machine.host) if machine is not None and not self.script else None
        text = remote or end_text(end, self.nproc, self.gpus, self.script)
        self.log.add(text, "info" if ended_well else "error")
        if self.script and self.launcher.log_path is not None:
            self.log.add(script_output_text(self.launcher.log_path))
        elif ended_well and end.run_id is not None:
            self.launcher.remove_log()  # the store holds the run; the output mattered only for a failure
        elif self.launcher.log_path is not None:
            self.log.add(output_text(self.launcher.log_path))
        self._finished(final_state(end.status))

    def stop_for_close(self, parent: QWidget, shutdown: Callable[[], object]) -> None:
        """The window closes mid-run: a modal 'Stopping N processes…' while `shutdown` stops the run, waits for
        its processes (bounded, responsive) and kills what is left."""
        dialog = QProgressDialog(stopping_text(self.nproc, self.gpus), "", 0, 0, parent)
        dialog.setCancelButton(None)  # the wait is bounded; nothing to cancel
        dialog.setWindowTitle(parent.window().windowTitle())  # the window's own title, as it names itself
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(0)
        self.closing_dialog = dialog
        dialog.show()
        try:
            shutdown()
        finally:
            dialog.close()
            dialog.deleteLater()
            self.closing_dialog = None
