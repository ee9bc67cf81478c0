"""The QThread side of a run: a worker QObject that calls `TrainingSession.run()` and re-emits its events.

Lifecycle rules (FIELD-NOTES): `run()` is wrapped in try/except/finally and always emits `finished`;
commands (stop, pause, clear cache) go straight to the session's thread-safe methods, because a queued
slot on this busy worker would never run; events are immutable snapshots sent through `Signal(object)`.
"""

from __future__ import annotations

import traceback

from PySide6.QtCore import QObject, Signal, Slot

from core.config import RunConfig


class TrainingWorker(QObject):
    """Runs one session in the thread it was moved to."""

    event = Signal(object)  # a core.events event (frozen dataclass)
    crashed = Signal(str)  # an exception escaped the session: the message and traceback
    finished = Signal()

    def __init__(self, config: RunConfig, record_memory_history: bool = False) -> None:
        super().__init__()
        from core.session import TrainingSession

        self.session = TrainingSession(config, [self.event.emit], record_memory_history=record_memory_history)

    @Slot()
    def run(self) -> None:
        try:
            self.session.run()
        except BaseException as exc:  # never let an exception leave the thread with `finished` unsent
            self.crashed.emit(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        finally:
            self.finished.emit()
