"""A data-parallel run started from the window. Its N rank processes cannot train in the window's thread, so the
window starts the CLI as a child, `python -m gpu_train_monitor run <the form's options> --nproc N --runs-db <the
window's store>`, in a session of its own (its output in a log file in a temporary folder), and follows it through the
run store, where rank 0 records the run under the uid the window handed the child (`RunStore.find_uid`). A
watched script (File ▸ Watch a script…) is such a child too, `python -m gpu_train_monitor watch -- python train.py`
started by `start_command` (its command line is `gpu_train_monitor.gui.launch.watch_command`'s), its run recorded by the
script's process. So is a run on a remote machine (`gpu_train_monitor.gui.launch.remote_command`), mirrored into the
window's store by the child, to which its controls go: it forwards them (`signals.signal_child`).

While it trains, the controls are signals to that recorded pid (`gpu_train_monitor.gui.launch.signals`); Stop before the
run is recorded (the ranks still starting) is a Ctrl+C to the child's process group, as a terminal sends it. When the
child ends, whatever it left behind is killed: its process group, and every descendant seen (the elastic
launcher may start ranks in sessions of their own). `shutdown()` (closing the window) stops the run, waits a
bounded time for the child, then kills the lot: no process outlives the window. An error before any run was
recorded (an option the CLI refuses, a rank that fails to start) comes back as the child's last error line.

The child's command line and output are `gpu_train_monitor.gui.launch.child`'s, the processes it leaves
`gpu_train_monitor.gui.launch.process_family`'s, how the run ended `gpu_train_monitor.gui.launch.texts`'s, and the kill
at interpreter exit `gpu_train_monitor.gui.launch.live_launchers`'s; here is the following, in the window's thread.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import psutil
from PySide6.QtCore import QObject, QTimer, Signal, Slot

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.events.signals import Control
from gpu_train_monitor.gui.launch import live_launchers
from gpu_train_monitor.gui.launch.child import child_environment, command_line, has_exited, read_output, spawn
from gpu_train_monitor.gui.launch.process_family import ProcessFamily, signal_group
from gpu_train_monitor.gui.launch.remote_command import RemoteMachine, on_machine
from gpu_train_monitor.gui.launch.signals import CannotSignal, cannot_signal, send, signal_child
from gpu_train_monitor.gui.launch.store_access import ReadOnlyStore
from gpu_train_monitor.gui.launch.texts import LaunchEnd, launch_end
from gpu_train_monitor.gui.qt.core_text import error_text
from gpu_train_monitor.store.run_store import RunNotFound, RunRow, RunStore, StoreError

POLL_INTERVAL_MS = 150  # the store and the child, while a run is under way
STOP_WAIT_S = 10.0  # closing the window: how long the ranks get to stop before they are killed
SETUP_STOP_GRACE_S = 10.0  # Stop before the run was recorded: then a Ctrl+C to the whole group
CONTROL_KINDS = ("RunPaused", "RunResumed")


class RankLauncher(QObject):
    """One data-parallel run (or watched script) at a time, as a child process followed through the run store."""

    run_found = Signal(int)  # the run's id in the store: rank 0 has recorded its start
    paused_changed = Signal(bool)  # the run recorded a pause (True) or a resume (False)
    stopping = Signal()  # the run has recorded its end; its processes are exiting
    ended = Signal(object)  # LaunchEnd, once the child has exited and nothing of it is left

    def __init__(self, store_path: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.store_path = Path(store_path)
        self.process: subprocess.Popen[bytes] | None = None
        self.nproc, self.run_id = 0, None
        self.run_uid = ""  # handed to the child: its run is recorded under it
        self.machine: RemoteMachine | None = None  # the run trains there, through the child (None: here)
        self.folder: Path | None = None  # the temporary folder holding the child's output
        self.launched_at, self.found_after_s = 0.0, None  # the launch's time; seconds until the run was recorded
        self._store = ReadOnlyStore(self.store_path)
        self._family = ProcessFamily()  # the child and every descendant seen
        self._event_seq = 0
        self._paused = False
        self._row: RunRow | None = None
        self._stop_requested_at: float | None = None
        self._group_interrupted = False
        self._missing = False  # the run was recorded, then not found in the store (deleted, or the store replaced)
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_INTERVAL_MS)
        self._timer.timeout.connect(self.poll)

    # ---- starting --------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.process is not None

    @property
    def log_path(self) -> Path | None:
        return None if self.folder is None else self.folder / "output.log"

    def start(self, config: RunConfig, resume: str | None = None, machine: RemoteMachine | None = None) -> None:
        """Start the child (on `machine` through its agent, when given); UserError when it cannot be started
        (nothing is left running then)."""
        args = command_line(config, self.store_path, resume)
        if (
            reason := self._launch(on_machine(args, machine) if machine else args, None, config.nproc, machine)
        ) is not None:
            raise UserError(
                self.tr("could not start {count} processes: {reason}").format(count=config.nproc, reason=reason)
                if machine is None
                else self.tr("could not start the run on {host}: {reason}").format(host=machine.host, reason=reason)
            )

    def start_command(self, args: list[str], folder: Path | None, machine: RemoteMachine | None = None) -> None:
        """Start a command line whose run records itself under the uid handed in its environment (a watched script:
        `python -m gpu_train_monitor watch -- python train.py`) in `folder`, on `machine` if given; UserError if it
        cannot be."""
        if (reason := self._launch(on_machine(args, machine) if machine else args, folder, 1, machine)) is not None:
            raise UserError(self.tr("could not start the script: {reason}").format(reason=reason))

    def _launch(self, args: list[str], folder: Path | None, nproc: int, machine: RemoteMachine | None) -> str | None:
        """Start `args` in `folder` (None: here) and follow it; why it could not be started, else None."""
        if self.process is not None:
            raise RuntimeError("a run in processes of its own is already under way")
        self.folder = Path(tempfile.mkdtemp(prefix="gpu-train-monitor-launched-run-"))
        run_uid = uuid.uuid4().hex
        try:
            self.process = spawn(args, folder, self.folder, child_environment(run_uid))
        except OSError as exc:
            return str(exc.strerror or exc)
        self.nproc, self.run_id, self._row, self._event_seq, self._paused = nproc, None, None, 0, False
        self.run_uid, self.machine, self.launched_at, self.found_after_s = run_uid, machine, time.time(), None
        self._stop_requested_at, self._group_interrupted, self._missing = None, False, False
        self._family = ProcessFamily()
        live_launchers.track(self)  # killed at interpreter exit, whatever ended it
        self._timer.start()
        return None

    def family(self, collect: bool = True) -> set[int]:
        """The pids of the child and its descendants (rank 0 among them once it runs), looked up now unless
        `collect` is False (the last poll's)."""
        if collect:
            self._collect()
        return self._family.alive_pids()

    def processes(self) -> list[psutil.Process]:
        """Every process of the run seen so far (the child, its ranks and theirs), alive or not: after the
        run, none of them may be left."""
        self._collect()
        return self._family.processes()

    def _collect(self) -> None:
        if self.process is not None:
            self._family.collect(self.process.pid)

    # ---- following -------------------------------------------------------------------------------
    @Slot()
    def poll(self) -> None:
        """Look for the run in the store, follow its pause state and end, and notice the child exiting."""
        if self.process is None:
            return
        self._collect()
        exited = self._child_exited()
        self._read_store()
        if (
            self._stop_requested_at is not None
            and self.run_id is None
            and not self._group_interrupted
            and time.monotonic() - self._stop_requested_at > SETUP_STOP_GRACE_S
        ):
            self._interrupt_group()  # the run never got recorded: stop it the way Ctrl+C in a terminal would
        if exited:
            self._finish()

    def _child_exited(self) -> bool:
        assert self.process is not None
        return has_exited(self.process)

    def _read_store(self) -> None:
        store = self._store.open()
        if store is None:
            return
        try:
            if self.run_id is None:
                self._find_run(store)
            if self.run_id is not None:
                self._follow(store)
        except RunNotFound:  # deleted from the Runs tab while it trains: nothing more to follow
            self._row, self._missing = None, True
        except StoreError:  # locked for a moment, or replaced: reopen at the next poll
            self._store.close()

    def _find_run(self, store: RunStore) -> None:
        run_id = store.find_uid(self.run_uid)
        if run_id is not None:
            self._found(run_id)

    def _found(self, run_id: int) -> None:
        self.run_id = run_id
        self.found_after_s = time.time() - self.launched_at
        self.run_found.emit(run_id)
        if self._stop_requested_at is not None and not self._group_interrupted:
            self._signal(Control.STOP)  # Stop was pressed while the ranks were starting

    def _follow(self, store: RunStore) -> None:
        assert self.run_id is not None
        was_running = self._row is None or self._row.status == "running"
        self._row = store.run(self.run_id)
        for event in store.events(self.run_id, self._event_seq, CONTROL_KINDS):
            self._event_seq = event.seq
            paused = event.kind == "RunPaused"
            if paused != self._paused:
                self._paused = paused
                self.paused_changed.emit(paused)
        if was_running and self._row.status != "running":
            self.stopping.emit()

    # ---- controls --------------------------------------------------------------------------------
    def request_stop(self) -> None:
        """Stop at the next step; before the run is recorded, once it is (or a Ctrl+C to the group if it
        never is)."""
        if self.process is None:
            return
        if self.run_id is None:
            self._stop_requested_at = self._stop_requested_at or time.monotonic()
            return
        self._signal(Control.STOP)

    def toggle_pause(self) -> None:
        self._signal(Control.PAUSE)

    def request_cache_clear(self) -> None:
        self._signal(Control.CLEAR_CACHE)

    def _signal(self, control: Control) -> None:
        """Send `control` to rank 0; CannotSignal (a UserError) says why it could not be sent."""
        if self.process is None or self.run_id is None:
            raise cannot_signal(control, self.tr("it has not started training yet"))
        if self.machine is not None:  # the local child forwards it to the run on that machine
            return signal_child(control, self.process, has_exited(self.process), self.machine.host)
        store = self._store.open()
        try:
            if store is None:
                raise cannot_signal(control, self.tr("the run store cannot be read"))
            row = store.run(self.run_id)
        except (StoreError, RunNotFound) as exc:
            raise cannot_signal(control, error_text(exc), self.run_id) from None
        send(row, control, self.family)

    def _interrupt_group(self) -> None:
        self._group_interrupted = True
        if self.process is not None:
            signal_group(self.process.pid, signal.SIGINT)

    # ---- ending ----------------------------------------------------------------------------------
    def shutdown(self, timeout_s: float = STOP_WAIT_S, wait: Callable[[float], None] | None = None) -> None:
        """Stop the run and wait up to `timeout_s` for the child to exit (`wait(seconds)` is called meanwhile:
        it keeps the window responsive), then kill whatever is left. `ended` is emitted before it returns."""
        if self.process is None:
            return
        self._stop_requested_at = self._stop_requested_at or time.monotonic()
        if self.run_id is None:
            self._interrupt_group()  # still starting: Ctrl+C, as in a terminal
        else:
            try:
                self._signal(Control.STOP)
            except CannotSignal:  # rank 0 is gone already: the rest is killed below
                pass
        deadline = time.monotonic() + timeout_s
        while self.process is not None and not self._child_exited() and time.monotonic() < deadline:
            (wait or time.sleep)(0.05)
            self._collect()
        if self.process is not None:
            self._read_store()
            self._finish()

    def _finish(self) -> None:
        """The child has exited (or is given up on): kill what it left, reap it, say how the run ended."""
        process = self.process
        if process is None:
            return
        self._timer.stop()
        killed = self._sweep()
        code = process.wait()
        self.process = None
        live_launchers.untrack(self)
        if self.run_id is None:  # a run too short to be seen while it trained
            self._find_late()
        end = self._end(code, killed)
        self._store.close()
        if end.missing:  # its run was recorded, then went from the store: nothing left to read it for
            self.remove_log()
        self.ended.emit(end)

    def _find_late(self) -> None:
        store = self._store.open()
        if store is None:
            return
        try:
            run_id = store.find_uid(self.run_uid)
            if run_id is None:
                return
            self.run_id = run_id
            self.found_after_s = time.time() - self.launched_at
            self.run_found.emit(run_id)
            self._row = store.run(run_id)
        except StoreError:
            pass
        except RunNotFound:
            self._missing = True

    def _end(self, code: int, killed: int) -> LaunchEnd:
        row = self._row
        if self.run_id is not None and row is not None:
            store = self._store.open()
            try:
                row = store.run(self.run_id) if store is not None else row
            except StoreError:
                pass
            except RunNotFound:
                self._missing = True
        if self._missing and self.run_id is not None:
            return LaunchEnd("failed", "", self.run_id, code, missing=True)
        return launch_end(row, self.run_id, code, killed, self._stop_requested_at is not None, self._log_text)

    def _sweep(self) -> int:
        """Kill the child's process group and every descendant seen still running; how many were killed
        (beside the child itself)."""
        assert self.process is not None
        return self._family.kill(self.process.pid)

    def _log_text(self) -> str:
        return read_output(self.log_path)

    def remove_log(self) -> None:
        """Delete the temporary folder of the last run's output (none while one trains)."""
        if self.process is None and self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def kill_now(self) -> None:
        """Kill the child and everything it started at once, with no wait (the process is exiting)."""
        if self.process is not None:
            self._sweep()
            self.process.wait()
            self.process = None
            live_launchers.untrack(self)
