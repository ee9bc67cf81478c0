"""Owns the QThread and worker of the current run, so the window never touches thread lifecycles.

One run at a time. `shutdown()` is what `closeEvent` calls: request stop, `thread.quit()` directly
(a queued quit would never run while the GUI thread waits), then a bounded `wait()`.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QThread, Signal, Slot

from core.config import RunConfig
from gui.worker import TrainingWorker


class RunController(QObject):
    """Starts runs in a fresh QThread and forwards their events to the GUI thread."""

    event = Signal(object)
    crashed = Signal(str)
    run_finished = Signal()  # the thread has ended and been cleaned up

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread: QThread | None = None
        self._worker: TrainingWorker | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    @property
    def session(self):  # the core TrainingSession of the current run, or None
        return self._worker.session if self._worker is not None else None

    @property
    def recording_history(self) -> bool:
        return self.session is not None and self.session.record_memory_history

    def start(self, config: RunConfig, record_memory_history: bool = False) -> None:
        if self._thread is not None:
            raise RuntimeError("a run is already active")
        thread = QThread()
        thread.setObjectName("training")
        worker = TrainingWorker(config, record_memory_history)
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        worker.event.connect(self._on_worker_event)  # queued: delivered in the GUI thread
        worker.crashed.connect(self._on_worker_crashed)
        worker.finished.connect(self._on_worker_finished)
        self._thread, self._worker = thread, worker
        thread.start()

    def request_stop(self) -> None:
        if self.session is not None:
            self.session.request_stop()

    def pause(self) -> None:
        if self.session is not None:
            self.session.pause()

    def resume(self) -> None:
        if self.session is not None:
            self.session.resume()

    def request_cache_clear(self) -> None:
        if self.session is not None:
            self.session.request_cache_clear()

    def request_snapshot(self, path: str) -> None:
        if self.session is not None:
            self.session.request_snapshot(path)

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Stop the run and wait for its thread (bounded). True when no thread is left running."""
        if self._thread is None:
            return True
        self.request_stop()
        self._thread.quit()
        finished = self._thread.wait(timeout_ms)
        if finished:
            self._cleanup()
        return finished

    @Slot(object)
    def _on_worker_event(self, event: object) -> None:
        self.event.emit(event)

    @Slot(str)
    def _on_worker_crashed(self, message: str) -> None:
        self.crashed.emit(message)

    @Slot()
    def _on_worker_finished(self) -> None:
        if self._thread is None:
            return
        self._thread.quit()
        self._thread.wait()
        self._cleanup()
        self.run_finished.emit()

    def _cleanup(self) -> None:
        thread, worker = self._thread, self._worker
        self._thread = self._worker = None
        del worker  # parentless: PySide deletes it with its last reference (its thread has ended)
        if thread is not None:
            thread.deleteLater()
