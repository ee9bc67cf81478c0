"""How a data-parallel run the window started ended, from what the run store and the child's output say. No Qt
here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.run_store import RunRow
from gui.launch_child import last_error_line


@dataclass(frozen=True)
class LaunchEnd:
    """How a launched run ended: the run's final status (completed, stopped, ..., or failed when it ended
    before it was recorded or without finishing its row), a one-line message, and its id when recorded."""

    status: str
    message: str
    run_id: int | None
    exit_code: int


def launch_end(row: RunRow | None, run_id: int | None, code: int, killed: int, stop_requested: bool,
               log_text: Callable[[], str]) -> LaunchEnd:
    """The end of a child that exited with `code`, its run's last row `row` (None when never recorded or not
    read), `killed` leftover processes killed after it, whether Stop (or a close) was asked, and its output
    (read only when needed: a long run's log is long)."""
    if row is None and stop_requested:  # Stop (or a close) while the ranks started up
        return LaunchEnd("stopped", "stopped before training started", run_id, code)
    if row is None:
        message = last_error_line(log_text()) if code else "it ended before its run was recorded"
        return LaunchEnd("failed", message, run_id, code)
    if row.status == "running":  # killed before it could finish its row
        return LaunchEnd("failed", f"its processes were killed (exit code {code}) before the run finished; "
                                   f"steps up to the last report are kept", row.id, code)
    message = row.message or ("" if code == 0 else last_error_line(log_text()))
    if killed:
        message = (message + "; " if message else "") + f"{killed} leftover process{'es' if killed > 1 else ''} killed"
    return LaunchEnd(row.status, message, row.id, code)
