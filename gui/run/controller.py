"""Owns the thread of the current run, so the window never touches thread lifecycles.

A run is one `TrainingSession`, or a `Comparison` (its sessions one after another, in the same thread;
its events arrive wrapped in `ContenderEvent`). One run at a time, in a `BackgroundTask`: a fresh QThread per
run, its worker's exceptions caught and `finished` always emitted, the thread waited for (bounded) before its
objects are released.
Commands go straight to the session's thread-safe methods: a queued slot on the busy worker would
never run. `shutdown()` is what `closeEvent` calls: request stop, then the task's bounded wait.

A data-parallel run (nproc > 1) is N processes, which a thread cannot hold: it goes to `launcher`
(`gpu_train_monitor.gui.launch.launcher`), a child process followed through the run store, and the same commands reach
it as signals to its rank 0; so does a watched script (`start_watch`), whose own process records its run, and a run on
a remote machine (`machine`: the child mirrors it into the store). `running` is true for either kind;
`data_parallel` says which (true for a watched script and a remote run: they are in processes of their own).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEventLoop, QObject, QTimer, Signal

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.checkpoint_files import CheckpointPolicy
from gpu_train_monitor.gui.launch.launcher import STOP_WAIT_S, RankLauncher
from gpu_train_monitor.gui.launch.remote_command import RemoteMachine
from gpu_train_monitor.gui.launch.watch_command import WatchRequest
from gpu_train_monitor.gui.qt.background import BackgroundTask
from gpu_train_monitor.gui.qt.locale_format import integer

WINDOW_CHECKPOINTS = CheckpointPolicy()  # the window's runs: a checkpoint at each epoch's end and on Stop, 2 kept


class RunController(QObject):
    """Starts runs in a fresh QThread and forwards their events to the GUI thread."""

    event = Signal(object)  # a gpu_train_monitor.events.events event (frozen dataclass), delivered in the GUI thread
    crashed = Signal(str)  # an exception escaped the session: the message and traceback
    run_finished = Signal()  # the thread has ended and been cleaned up

    def __init__(self, parent: QObject | None = None, runs_db: Path | str | None = None, record: bool = True) -> None:
        """Runs are recorded in the run store at `runs_db` (None: the default store) unless `record` is False."""
        super().__init__(parent)
        from gpu_train_monitor.store.run_store import default_store_path

        self.store_path = Path(runs_db).expanduser() if runs_db is not None else default_store_path()
        self.record = record
        self.checkpoints = WINDOW_CHECKPOINTS  # when runs save checkpoints unasked (the screenshot mode: never)
        self._task = BackgroundTask(self, thread_name="training")
        # the task's signals already arrive in the GUI thread: chain them straight through
        self._task.progress.connect(self.event)
        self._task.failed.connect(self.crashed)
        self._task.ended.connect(self.run_finished)
        self._session: Any = None
        self.launcher = RankLauncher(self.store_path, self)  # data-parallel runs: a child process per run

    @property
    def running(self) -> bool:
        """A run (of either kind) is under way."""
        return self._task.running or self.launcher.running

    @property
    def data_parallel(self) -> bool:
        """The run under way is a data-parallel one, in processes of its own."""
        return self.launcher.running

    @property
    def _thread(self):  # the QThread of the current run (for lifecycle checks), or None
        return self._task.thread

    @property
    def session(self):  # the core TrainingSession (or Comparison) of the current run, or None
        return self._session if self._task.running else None

    @property
    def recording_history(self) -> bool:
        return self.session is not None and self.session.record_memory_history

    def start(
        self,
        config: RunConfig,
        record_memory_history: bool = False,
        resume: str | None = None,
        checkpoints: CheckpointPolicy | None = None,
        machine: RemoteMachine | None = None,
    ) -> None:
        """Start a run of `config`; with `resume`, continue that checkpoint's run
        (`gpu_train_monitor.engine.checkpoint_files.read_config` gives the config to show first). Raises UserError,
        before any thread starts, for a checkpoint that cannot be read or resumed with `config` (a ConfigError names
        the field).

        With `config.nproc` > 1 the run's processes start as a child (`launcher`): its events do not come
        through `event`; the launcher's own signals say when it is recorded, paused and ended. So does a run on
        a remote `machine`, whatever its process count."""
        if self.running:
            raise RuntimeError("a run is already active")
        if machine is not None:
            if not self.record:
                raise UserError(
                    self.tr(
                        "a run on {host} is followed through the run store, and this window records nothing"
                    ).format(host=machine.host)
                )
            self.launcher.start(config, resume, machine)
            return
        if config.nproc > 1:
            if not self.record:
                raise UserError(
                    self.tr(
                        "a run of {count} processes is followed through the run store, and this "
                        "window records nothing (start it with --runs-db PATH)"
                    ).format(count=integer(config.nproc))
                )
            self.launcher.start(config, resume)  # it saves no checkpoints
            return
        from gpu_train_monitor.engine.session import TrainingSession

        session = TrainingSession(
            config,
            record_memory_history=record_memory_history,
            checkpoints=checkpoints or self.checkpoints,
            resume=resume,
        )

        def train(report: Callable[[object], None], _cancelled: Callable[[], bool]) -> object:
            session.observers.append(report)  # each event crosses to the GUI thread as it is
            with self._recording(session.observers, report):
                return session.run()

        self._session = session
        self._task.start(train)

    def start_watch(self, request: WatchRequest, machine: RemoteMachine | None = None) -> None:
        """Start a script of the user's under `python -m gpu_train_monitor watch` in its folder, followed through the
        run store as a data-parallel run is (`launcher`); UserError when it cannot be (nothing started then)."""
        if self.running:
            raise RuntimeError("a run is already active")
        if not self.record:
            raise UserError(
                self.tr("a watched script is followed through the run store, and this window records nothing")
            )
        if machine is not None:  # the script and its folder are that machine's
            self.launcher.start_command(request.remote_command_line(self.store_path), None, machine)
            return
        self.launcher.start_command(request.command_line(self.store_path), request.working_folder)

    def start_comparison(
        self, base: RunConfig, overrides: Sequence[Mapping[str, Any]], machine: RemoteMachine | None = None
    ) -> Any:
        """Race `base` with each of `overrides` (2 to 4), one session after another in one thread; returns
        the `gpu_train_monitor.compare.comparison.Comparison`. Raises ConfigError, before any thread starts, for a plan
        that cannot run here (overrides that collide, a device not present, a fast path the device refuses). With
        `machine`, the runs train there (`gpu_train_monitor.remote.client.jobs.RemoteComparison`: the same events,
        followed over ssh) and are recorded here with that machine's host; what it refuses comes back from there as the
        same errors."""
        if self.running:
            raise RuntimeError("a run is already active")
        if machine is not None:
            from gpu_train_monitor.remote.client.jobs import RemoteComparison

            comparison: Any = RemoteComparison(machine.target(), base, overrides)
        else:
            from gpu_train_monitor.compare.comparison import Comparison

            comparison = Comparison(base, overrides)

        def race(report: Callable[[object], None], _cancelled: Callable[[], bool]) -> object:
            comparison.observers.append(report)  # ComparisonStarted, ContenderEvent..., ComparisonFinished
            with self._recording(comparison.observers, report):
                return comparison.run()

        self._session = comparison
        self._task.start(race)
        return comparison

    def _recording(self, observers: list[Any], report: Callable[[object], None]) -> contextlib.AbstractContextManager:
        """In the worker thread (opening a locked store may wait seconds): record the run unless recording is
        off; a store that cannot be used, or stops working, is a warning in the log and the run trains on."""
        if not self.record:
            return contextlib.nullcontext()
        from gpu_train_monitor.events.events import LogMessage
        from gpu_train_monitor.store.recorder import recording

        def warn(text: str) -> None:
            report(LogMessage("warning", text))

        return recording(observers, self.store_path, warn)

    def request_stop(self) -> None:
        if self.launcher.running:
            self.launcher.request_stop()
        elif self.session is not None:
            self.session.request_stop()

    def pause(self) -> None:
        """Pause at the next step; for a data-parallel run a UserError says when its rank 0 cannot be reached."""
        if self.launcher.running:
            self.launcher.toggle_pause()  # the run's recorded RunPaused says when it took effect
        elif self.session is not None:
            self.session.pause()

    def resume(self) -> None:
        if self.launcher.running:
            self.launcher.toggle_pause()
        elif self.session is not None:
            self.session.resume()

    def request_cache_clear(self) -> None:
        if self.launcher.running:
            self.launcher.request_cache_clear()
        elif self.session is not None:
            self.session.request_cache_clear()

    def request_snapshot(self, path: str) -> None:
        if self.session is not None:
            self.session.request_snapshot(path)

    @property
    def can_checkpoint(self) -> bool:
        """A single run is under way (a comparison's runs save no checkpoints)."""
        if self.session is None:  # no run: nothing to import torch for
            return False
        from gpu_train_monitor.engine.session import TrainingSession

        return isinstance(self.session, TrainingSession)

    def request_checkpoint(self, path: str | None = None) -> bool:
        """Save a checkpoint at the run's next step boundary (to `path`, or its checkpoint folder); its
        CheckpointSaved event (or a warning) follows. False when no single run is under way."""
        if not self.can_checkpoint:
            return False
        self.session.request_checkpoint(path)
        return True

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Stop the run and wait for its thread (bounded). True when no thread is left running. A data-parallel
        run gets up to STOP_WAIT_S to stop (events are processed meanwhile), then its processes are killed."""
        if self.launcher.running:
            self.launcher.shutdown(STOP_WAIT_S, process_events_for)
            return True
        self.request_stop()
        follow_stop = getattr(self.session, "follow_stop", None)
        if follow_stop is not None:  # a comparison on another machine: its end comes over the connection
            if self._task.shutdown(timeout_ms // 2):
                return True
            follow_stop.set()  # the connection is down: it stops there all the same; stop waiting for its end
        return self._task.shutdown(timeout_ms)


def process_events_for(seconds: float) -> None:
    """Keep the window drawing and answering while it waits on processes (a bounded wait, not a thread's)."""
    loop = QEventLoop()
    QTimer.singleShot(max(1, int(seconds * 1000)), loop.quit)
    loop.exec()
