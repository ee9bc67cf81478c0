"""Controls for a recorded run that trains in another process: a data-parallel run the window started, whose
ranks cannot live in the window's thread. They reach it the way the CLI's contract says, as signals to the
process the run store names (the run row's pid: rank 0 of a data-parallel run):

SIGINT stops it at the next step (every rank at the same step), SIGUSR2 pauses or resumes it (a toggle),
SIGUSR1 clears the CUDA cache on every rank.

A pid is signalled only when it can be that run's process: the row was recorded on this host, the run is
still live (its process alive and the same one, `RunRow.live`), and, where the caller knows which processes
it started, the pid is one of them. No Qt here.
"""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Callable, Collection
from enum import StrEnum

from core.errors import UserError
from core.run_store import RunRow


class Control(StrEnum):
    STOP = "stop"
    PAUSE = "pause or resume"
    CLEAR_CACHE = "clear the cache of"


SIGNAL_NAMES = {Control.STOP: "SIGINT", Control.PAUSE: "SIGUSR2", Control.CLEAR_CACHE: "SIGUSR1"}


class CannotSignal(UserError):
    """The run's process cannot be reached from here; the message says why, in one sentence."""


def control_signal(control: Control) -> int:
    """The signal number for `control`; CannotSignal where this system has no such signal (Windows has no
    SIGUSR1 or SIGUSR2)."""
    number = getattr(signal, SIGNAL_NAMES[control], None)
    if number is None:
        raise CannotSignal(f"cannot {control} a run in another process here: this system has no "
                           f"{SIGNAL_NAMES[control]}")
    return int(number)


def signal_problem(row: RunRow, ours: Callable[[], Collection[int]] | None = None) -> str | None:
    """Why run `row`'s process cannot be signalled from here, or None. `ours`: the pids the caller started
    (a launcher and its descendants), asked only when the other checks pass."""
    if row.host != socket.gethostname():
        return f"run {row.id} trains on {row.host}, not on this machine"
    if row.status != "running":
        return f"run {row.id} has ended ({row.status})"
    if not row.live:
        return f"run {row.id}'s process {row.pid} is gone"
    if ours is not None and row.pid not in ours():
        return f"run {row.id}'s process {row.pid} was not started by this window"
    return None


def send(row: RunRow, control: Control, ours: Callable[[], Collection[int]] | None = None) -> None:
    """Send `control` to run `row`'s recorded process; CannotSignal says why it could not be sent."""
    number = control_signal(control)
    problem = signal_problem(row, ours)
    if problem is not None:
        raise CannotSignal(f"cannot {control} run {row.id}: {problem}")
    try:
        os.kill(row.pid, number)
    except ProcessLookupError:  # it ended between the check and the signal
        raise CannotSignal(f"cannot {control} run {row.id}: its process {row.pid} has just ended") from None
    except PermissionError:
        raise CannotSignal(f"cannot {control} run {row.id}: its process {row.pid} belongs to another user") from None
