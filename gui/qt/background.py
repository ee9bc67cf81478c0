"""A callable run in its own QThread, for work like the batch-size finder that must not block the GUI.

Same lifecycle rules as the training worker: try/except/finally, `finished` always emitted, a
`threading.Event` for cancellation (queued slots on a busy worker never run), bounded `wait()`.
"""

from __future__ import annotations

import gc
import threading
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.gui.qt.core_text import error_text
from gpu_train_monitor.gui.qt.gui_thread_gc import collect_on_the_gui_thread


class _Worker(QObject):
    progress = Signal(object)
    done = Signal(object)
    failed = Signal(str)
    finished = Signal()

    def __init__(
        self, task: Callable[[Callable[[Any], None], Callable[[], bool]], Any], cancel: threading.Event
    ) -> None:
        super().__init__()
        self.task = task
        self.cancel = cancel

    @Slot()
    def run(self) -> None:
        try:
            self.done.emit(self.task(self.progress.emit, self.cancel.is_set))
        except UserError as exc:  # a signal carries a plain str: translated here (Qt's translator is thread-safe)
            self.failed.emit(error_text(exc))
        except BaseException as exc:
            self.failed.emit(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        finally:
            self.finished.emit()


class BackgroundTask(QObject):
    """Runs `task(report_progress, cancelled)` in a QThread; results arrive in the GUI thread."""

    progress = Signal(object)
    done = Signal(object)
    failed = Signal(str)
    ended = Signal()

    def __init__(self, parent: QObject | None = None, thread_name: str = "background") -> None:
        super().__init__(parent)
        self.thread_name = thread_name  # also the OS thread's name, handy in a debugger or `top -H`
        collect_on_the_gui_thread()  # the work's garbage collection (out-of-memory release) runs on this thread
        self._thread: QThread | None = None
        self._worker: _Worker | None = None
        self._cancel = threading.Event()

    @property
    def running(self) -> bool:
        return self._thread is not None

    @property
    def thread(self) -> QThread | None:
        return self._thread

    def start(self, task: Callable[[Callable[[Any], None], Callable[[], bool]], Any]) -> None:
        if self._thread is not None:
            raise RuntimeError("a task is already running")
        # Garbage that holds Qt objects (a closed window's menus) is collected here, on the GUI thread: else the
        # worker's own automatic collection (a trace allocates a lot) may find it, and Qt objects destroyed off the
        # GUI thread deadlock PySide6 on the GIL (seen in the suite: the GUI thread deleting a QMenu handed to it,
        # waiting on Qt's lock; the worker tracing a step, waiting for the GIL). About 80 ms a start.
        gc.collect()
        self._cancel = threading.Event()
        thread = QThread()
        thread.setObjectName(self.thread_name)
        worker = _Worker(task, self._cancel)
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        worker.progress.connect(self._on_progress)
        worker.done.connect(self._on_done)
        worker.failed.connect(self._on_failed)
        worker.finished.connect(self._on_finished)
        self._thread, self._worker = thread, worker
        thread.start()

    def cancel(self) -> None:
        self._cancel.set()

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        if self._thread is None:
            return True
        self._cancel.set()
        self._thread.quit()
        if not self._thread.wait(timeout_ms):
            return False
        self._cleanup()
        return True

    @Slot(object)
    def _on_progress(self, value: object) -> None:
        self.progress.emit(value)

    @Slot(object)
    def _on_done(self, value: object) -> None:
        self.done.emit(value)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.failed.emit(message)

    @Slot()
    def _on_finished(self) -> None:
        if self._thread is None:
            return
        self._thread.quit()
        self._thread.wait()
        self._cleanup()
        self.ended.emit()

    def _cleanup(self) -> None:
        thread, worker = self._thread, self._worker
        self._thread = self._worker = None
        del worker  # parentless: PySide deletes it with its last reference (its thread has ended)
        if thread is not None:
            thread.deleteLater()
