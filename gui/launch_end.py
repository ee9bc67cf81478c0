"""How a data-parallel run the window started ended, from what the run store and the child's output say, in
the user's language (Qt's translator, context "launch_end"): the child's own error line and the run's stored
message are shown as they were written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication

from core.store.run_store import RunRow
from gui.launch_child import last_error_line


@dataclass(frozen=True)
class LaunchEnd:
    """How a launched run ended: the run's final status (completed, stopped, ..., or failed when it ended
    before it was recorded or without finishing its row), a one-line message, and its id when recorded."""

    status: str
    message: str
    run_id: int | None
    exit_code: int
    missing: bool = False  # recorded as `run_id`, then not found in the store (deleted, or the store replaced)


def launch_end(row: RunRow | None, run_id: int | None, code: int, killed: int, stop_requested: bool,
               log_text: Callable[[], str]) -> LaunchEnd:
    """The end of a child that exited with `code`, its run's last row `row` (None when never recorded or not
    read), `killed` leftover processes killed after it, whether Stop (or a close) was asked, and its output
    (read only when needed: a long run's log is long)."""
    translate = QCoreApplication.translate
    if row is None and stop_requested:  # Stop (or a close) while the ranks started up
        return LaunchEnd("stopped", translate("launch_end", "stopped before training started"), run_id, code)
    if row is None:
        message = error_line(log_text()) if code else translate("launch_end", "it ended before its run was recorded")
        return LaunchEnd("failed", message, run_id, code)
    if row.status == "running":  # killed before it could finish its row
        return LaunchEnd("failed", translate(
            "launch_end", "its processes were killed (exit code {code}) before the run finished; steps up to the "
                          "last report are kept").format(code=code), row.id, code)
    message = row.message or ("" if code == 0 else error_line(log_text()))
    return LaunchEnd(row.status, with_leftovers(message, killed), row.id, code)


def error_line(output: str) -> str:
    """The child's last error line, or a sentence saying it left none."""
    return last_error_line(output) or QCoreApplication.translate(
        "launch_end", "it ended before recording anything, without a message")


def with_leftovers(message: str, killed: int) -> str:
    """`message`, then how many processes the run left behind were killed (if any)."""
    translate = QCoreApplication.translate
    if not killed:
        return message
    if message:
        if killed == 1:
            return translate("launch_end", "{message}; 1 leftover process killed").format(message=message)
        return translate("launch_end", "{message}; {count} leftover processes killed").format(
            message=message, count=killed)
    if killed == 1:
        return translate("launch_end", "1 leftover process killed")
    return translate("launch_end", "{count} leftover processes killed").format(count=killed)
