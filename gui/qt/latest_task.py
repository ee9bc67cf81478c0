"""The latest of a stream of requests, worked out in a background thread: what a form needs to answer a question
about its settings while they are typed (a predicted memory peak) without blocking the typing or showing an
answer to settings the user has already changed.

Requests come faster than answers: each one replaces the one waiting; the work starts after a quiet interval
(debounced) and one at a time (a job asked for while another runs waits for it: the two would share the CPU);
an answer to a request that has been replaced meanwhile is dropped, never shown, and the job working it out is
told it may stop (its `cancelled()` turns true: a long job checks it between its parts).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from gpu_train_monitor.gui.qt.background import BackgroundTask

DEBOUNCE_MS = 300  # typing "256" asks three times: only the last is worked out
SHUTDOWN_WAIT_MS = 30_000  # a job cannot be interrupted: a prediction ends within seconds


Job = Callable[[Callable[[Any], None], Callable[[], bool]], Any]  # job(report_progress, cancelled) -> value


class LatestTask(QObject):
    """`request(job)` runs `job(report, cancelled)` off the GUI thread after `delay_ms` without another request;
    `answered(value)` brings back the value of the latest request only, `progress(value)` what its job reported
    on the way, `failed(text)` an unexpected error of the latest."""

    answered = Signal(object)
    progress = Signal(object)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None, delay_ms: int = DEBOUNCE_MS, thread_name: str = "latest") -> None:
        super().__init__(parent)
        self.task = BackgroundTask(self, thread_name)
        self.task.done.connect(self._on_done)
        self.task.progress.connect(self._on_progress)
        self.task.failed.connect(self._on_failed)
        self.task.ended.connect(self._on_ended)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(delay_ms)
        self.timer.timeout.connect(self._start_waiting)
        self._latest = 0  # the number of the latest request
        self._running = 0  # the number of the request being worked out (0: none)
        self._waiting: Job | None = None

    @property
    def busy(self) -> bool:
        """A request is waiting or being worked out: its answer has not come back yet."""
        return self._waiting is not None or self.task.running

    @property
    def waiting(self) -> bool:
        """A request waits to be worked out (its quiet interval, or the job before it)."""
        return self._waiting is not None

    def request(self, job: Job, delay_ms: int | None = None) -> None:
        """Work out `job(report, cancelled)` once no other request has come for the delay (`delay_ms`, default the
        task's); a job working out an older request is told to stop."""
        self._latest += 1
        self.task.cancel()
        self._waiting = job
        self.timer.start(self.timer.interval() if delay_ms is None else delay_ms)

    def drop(self) -> None:
        """Forget what is waiting; an answer on its way is dropped (the question no longer stands)."""
        self._latest += 1
        self._waiting = None
        self.timer.stop()
        self.task.cancel()

    def shutdown(self, timeout_ms: int = SHUTDOWN_WAIT_MS) -> bool:
        """Drop what waits and wait for the job running, if any (bounded). True when no thread is left."""
        self.drop()
        return self.task.shutdown(timeout_ms)

    @Slot()
    def _start_waiting(self) -> None:
        if self._waiting is None or self.task.running:  # one at a time: started again when the running one ends
            return
        job, self._waiting = self._waiting, None
        self._running = self._latest
        self.task.start(job)

    @Slot(object)
    def _on_done(self, value: object) -> None:
        if self._running == self._latest:
            self.answered.emit(value)

    @Slot(object)
    def _on_progress(self, value: object) -> None:
        if self._running == self._latest:
            self.progress.emit(value)

    @Slot(str)
    def _on_failed(self, text: str) -> None:
        if self._running == self._latest:
            self.failed.emit(text)

    @Slot()
    def _on_ended(self) -> None:
        self._running = 0
        if self._waiting is not None and not self.timer.isActive():
            self._start_waiting()
