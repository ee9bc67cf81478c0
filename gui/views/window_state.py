"""The window's run states in one place: their names, what the status bar shows, and their colours.

A `StrEnum`, so a state compares equal to its name and travels through `Signal(str)` as that name; what
people read (`shown`) is the name in the user's language.
"""

from __future__ import annotations

from enum import StrEnum

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication


class RunState(StrEnum):
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
    def after(cls, status: str) -> "RunState":
        """The final state for a `RunFinished.status` (completed, stopped, diverged, oom, failed)."""
        return cls.FINISHED if status == "completed" else cls(status)

    @property
    def shown(self) -> str:
        """What the status bar says, translated: cleaning up after the session is still 'stopping' to a user."""
        state = RunState.STOPPING if self is RunState.FINISHING else self
        return QCoreApplication.translate("RunState", _SHOWN[state])

    @property
    def colour(self) -> str:
        return _COLOURS.get(self, "#444444")

    @property
    def can_pause(self) -> bool:
        """Pause and Resume act at step boundaries: only once the run reports it is training."""
        return self in (RunState.RUNNING, RunState.PAUSED)

    @property
    def can_stop(self) -> bool:
        return self not in (RunState.STOPPING, RunState.FINISHING)


_SHOWN = {RunState.IDLE: QT_TRANSLATE_NOOP("RunState", "idle"),
          RunState.STARTING: QT_TRANSLATE_NOOP("RunState", "starting"),
          RunState.RUNNING: QT_TRANSLATE_NOOP("RunState", "running"),
          RunState.PAUSED: QT_TRANSLATE_NOOP("RunState", "paused"),
          RunState.STOPPING: QT_TRANSLATE_NOOP("RunState", "stopping"),
          RunState.FINISHED: QT_TRANSLATE_NOOP("RunState", "finished"),
          RunState.STOPPED: QT_TRANSLATE_NOOP("RunState", "stopped"),
          RunState.DIVERGED: QT_TRANSLATE_NOOP("RunState", "diverged"),
          RunState.OOM: QT_TRANSLATE_NOOP("RunState", "oom"),
          RunState.FAILED: QT_TRANSLATE_NOOP("RunState", "failed")}
_COLOURS = {RunState.RUNNING: "#2e7d32", RunState.PAUSED: "#ef6c00", RunState.STOPPING: "#ef6c00",
            RunState.FINISHING: "#ef6c00", RunState.DIVERGED: "#c62828", RunState.OOM: "#c62828",
            RunState.FAILED: "#c62828", RunState.FINISHED: "#1565c0"}
