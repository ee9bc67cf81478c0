"""The launchers whose child is still running, so that however the interpreter ends (a second Ctrl+C, which
exits at once, or sys.exit) their processes are killed: no data-parallel run outlives the window.

Apart from `gpu_train_monitor.gui.launch.launcher` because this is the process's exit, not one run's following.
"""

from __future__ import annotations

import atexit
from typing import Protocol


class Killable(Protocol):
    def kill_now(self) -> None:
        """Kill the child and everything it started at once, with no wait."""


_live: set[Killable] = set()


def track(launcher: Killable) -> None:
    """`launcher` has started a child: kill it at exit unless `untrack`ed first."""
    _live.add(launcher)


def untrack(launcher: Killable) -> None:
    """`launcher`'s child has been reaped: nothing of it is left to kill."""
    _live.discard(launcher)


def kill_all() -> None:
    """Kill every launched run's processes now: the interpreter is exiting (a second Ctrl+C, sys.exit)."""
    for launcher in list(_live):
        try:
            launcher.kill_now()
        except Exception:  # noqa: BLE001 - exiting: kill the others still
            continue


atexit.register(kill_all)
