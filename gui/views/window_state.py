"""The window's run states in one place: their names, what the status bar shows, and their colours.

A `StrEnum`, so a state compares equal to its name and travels through `Signal(str)` as that name; what
people read (`shown`) is the name in the user's language. A state after the run ended takes the colour of
its run status (`gpu_train_monitor.gui.i18n.status_text`).
"""

from __future__ import annotations

from enum import StrEnum

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from gpu_train_monitor.events.status import Status
from gpu_train_monitor.gui.i18n.status_text import status_colour
from gpu_train_monitor.gui.qt import palette


class WindowState(StrEnum):
    IDLE = "idle"
    STARTING = "starting"  # Start clicked: the session loads data and builds the model
    RUNNING = "running"
    PAUSED = "paused"
    STOPPING = "stopping"  # Stop clicked: the session stops at the next step boundary
    FINISHING = "finishing"  # the session has ended; its thread is being cleaned up
    FINISHED = "finished"
    STOPPED = "stopped"
    DIVERGED = "diverged"
    OOM = "oom"
    FAILED = "failed"

    @classmethod
    def after(cls, status: str) -> "WindowState":
        """The final state for a `RunFinished.status` (completed, stopped, diverged, oom, failed); ValueError
        for a status no run of this window ends with."""
        return cls.FINISHED if status == Status.COMPLETED else cls(status)

    @property
    def shown(self) -> str:
        """What the status bar says, translated: cleaning up after the session is still 'stopping' to a user."""
        state = WindowState.STOPPING if self is WindowState.FINISHING else self
        return QCoreApplication.translate("WindowState", _SHOWN[state])

    @property
    def colour(self) -> str:
        return _COLOURS.get(self, palette.NEUTRAL)

    @property
    def can_pause(self) -> bool:
        """Pause and Resume act at step boundaries: only once the run reports it is training."""
        return self in (WindowState.RUNNING, WindowState.PAUSED)

    @property
    def can_stop(self) -> bool:
        return self not in (WindowState.STOPPING, WindowState.FINISHING)


_SHOWN = {
    WindowState.IDLE: QT_TRANSLATE_NOOP("WindowState", "idle"),
    WindowState.STARTING: QT_TRANSLATE_NOOP("WindowState", "starting"),
    WindowState.RUNNING: QT_TRANSLATE_NOOP("WindowState", "running"),
    WindowState.PAUSED: QT_TRANSLATE_NOOP("WindowState", "paused"),
    WindowState.STOPPING: QT_TRANSLATE_NOOP("WindowState", "stopping"),
    WindowState.FINISHED: QT_TRANSLATE_NOOP("WindowState", "completed"),  # the Runs table's word for it
    WindowState.STOPPED: QT_TRANSLATE_NOOP("WindowState", "stopped"),
    WindowState.DIVERGED: QT_TRANSLATE_NOOP("WindowState", "diverged"),
    WindowState.OOM: QT_TRANSLATE_NOOP("WindowState", "oom"),
    WindowState.FAILED: QT_TRANSLATE_NOOP("WindowState", "failed"),
}
_COLOURS = {
    WindowState.RUNNING: palette.GOOD,
    WindowState.PAUSED: palette.WARNING,
    WindowState.STOPPING: palette.WARNING,
    WindowState.FINISHING: palette.WARNING,
    **{
        WindowState.after(status): status_colour(status)
        for status in Status
        if status.finished and status is not Status.INTERRUPTED
    },
}  # an ending: its status's colour
