"""Controls for a recorded run that trains in another process: a data-parallel run the window started, whose
ranks cannot live in the window's thread. They reach it the way the CLI's contract says, as signals to the
process the run store names (the run row's pid: rank 0 of a data-parallel run), each control's signal
as gpu_train_monitor.events.signals' table says (stop at the next step, every rank at the same step; pause or resume, a
toggle; clear the CUDA cache on every rank).

A pid is signalled only when it can be that run's process: the row was recorded on this host, the run is
still live (its process alive and the same one, `RunRow.live`), and, where the caller knows which processes
it started, the pid is one of them. No widgets here; why a signal cannot be sent is said in the user's
language (Qt's translator, context "run_signals"), one whole sentence per control.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable, Collection

from PySide6.QtCore import QCoreApplication

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.events.signals import CONTROL_SIGNALS, Control, signal_number
from gpu_train_monitor.gui.i18n.status_text import status_text
from gpu_train_monitor.store.run_store import RunRow


class CannotSignal(UserError):
    """The run's process cannot be reached from here; the message says why, in one sentence."""


def cannot_signal(control: Control, problem: str, run_id: int | None = None) -> CannotSignal:
    """'cannot stop run 7: <problem>' ('the run' while it has no id yet), `problem` a clause in the user's
    language."""
    translate = QCoreApplication.translate
    if run_id is None:
        template = {
            Control.STOP: translate("run_signals", "cannot stop the run: {problem}"),
            Control.PAUSE: translate("run_signals", "cannot pause or resume the run: {problem}"),
            Control.CLEAR_CACHE: translate("run_signals", "cannot clear the cache of the run: {problem}"),
        }
    else:
        template = {
            Control.STOP: translate("run_signals", "cannot stop run {run_id}: {problem}"),
            Control.PAUSE: translate("run_signals", "cannot pause or resume run {run_id}: {problem}"),
            Control.CLEAR_CACHE: translate("run_signals", "cannot clear the cache of run {run_id}: {problem}"),
        }
    return CannotSignal(template[control].format(run_id=run_id, problem=problem))


def control_signal(control: Control) -> int:
    """The signal number for `control`; CannotSignal where this system has no such signal (Windows has no
    SIGUSR1 or SIGUSR2)."""
    number = signal_number(control)
    if number is None:
        translate = QCoreApplication.translate
        template = {
            Control.STOP: translate(
                "run_signals", "cannot stop a run in another process here: this system has no {signal}"
            ),
            Control.PAUSE: translate(
                "run_signals", "cannot pause or resume a run in another process here: this system has no {signal}"
            ),
            Control.CLEAR_CACHE: translate(
                "run_signals", "cannot clear the cache of a run in another process here: this system has no {signal}"
            ),
        }
        raise CannotSignal(template[control].format(signal=CONTROL_SIGNALS[control]))
    return number


def signal_problem(row: RunRow, ours: Callable[[], Collection[int]] | None = None) -> str | None:
    """Why run `row`'s process cannot be signalled from here (a clause in the user's language), or None.
    `ours`: the pids the caller started (a launcher and its descendants), asked only when the other checks
    pass."""
    if row.host != socket.gethostname():
        return QCoreApplication.translate("run_signals", "run {run_id} trains on {host}, not on this machine").format(
            run_id=row.id, host=row.host
        )
    if row.status != "running":
        return QCoreApplication.translate("run_signals", "run {run_id} has ended ({status})").format(
            run_id=row.id, status=status_text(row.status)
        )
    if not row.live:
        return QCoreApplication.translate("run_signals", "run {run_id}'s process {pid} is gone").format(
            run_id=row.id, pid=row.pid
        )
    if ours is not None and row.pid not in ours():
        return QCoreApplication.translate(
            "run_signals", "run {run_id}'s process {pid} was not started by this window"
        ).format(run_id=row.id, pid=row.pid)
    return None


def send(row: RunRow, control: Control, ours: Callable[[], Collection[int]] | None = None) -> None:
    """Send `control` to run `row`'s recorded process; CannotSignal says why it could not be sent."""
    number = control_signal(control)
    problem = signal_problem(row, ours)
    if problem is not None:
        raise cannot_signal(control, problem, row.id)
    try:
        os.kill(row.pid, number)
    except ProcessLookupError:  # it ended between the check and the signal
        problem = QCoreApplication.translate("run_signals", "its process {pid} has just ended")
        raise cannot_signal(control, problem.format(pid=row.pid), row.id) from None
    except PermissionError:
        problem = QCoreApplication.translate("run_signals", "its process {pid} belongs to another user")
        raise cannot_signal(control, problem.format(pid=row.pid), row.id) from None


def signal_child(control: Control, child: subprocess.Popen[bytes], exited: bool, host: str) -> None:
    """Send `control` to `child`, the local `run --remote` that forwards it to its run on `host` (that run's
    recorded pid is the other machine's); CannotSignal once the child has ended."""
    number = control_signal(control)
    if exited:
        problem = QCoreApplication.translate("run_signals", "its link to {host} has ended").format(host=host)
        raise cannot_signal(control, problem)
    os.kill(child.pid, number)
