"""Garbage collected on the GUI thread, for work that runs in a worker thread.

Out-of-memory recovery and the batch-size finder collect garbage (`gc.collect()`) so that tensors held in
reference cycles go before the allocator's cache is emptied. In the window's process that garbage can also hold
Qt objects (a closed dialog, a plot item replaced during the run), and destroying one off the GUI thread
deadlocks PySide6 on the GIL while the GUI thread waits on Qt (seen in the test suite: the worker in
gc.collect, the GUI thread redrawing, both stuck). So a worker asks the GUI thread to collect, and waits a
bounded time: a GUI thread busy for longer (closing the window) leaves the collection out, which only delays
freeing cyclic garbage.
"""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, Signal, Slot

from gpu_train_monitor.memory import oom

WAIT_S = 5.0  # how long a worker waits for the GUI thread to collect


class GuiThreadCollector(QObject):
    """A callable that runs gc.collect() on the thread this object lives in (the application's)."""

    requested = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._done = threading.Event()
        self.requested.connect(self._collect, Qt.ConnectionType.QueuedConnection)

    @Slot()
    def _collect(self) -> None:
        gc.collect()
        self._done.set()

    def __call__(self) -> bool:
        """Collect on the GUI thread; returns whether it happened within WAIT_S."""
        if QThread.currentThread() == self.thread():
            gc.collect()
            return True
        self._done.clear()
        try:
            self.requested.emit()
        except RuntimeError:  # the application (and this object with it) is gone: nothing is left to draw
            gc.collect()
            return True
        return self._done.wait(WAIT_S)


def collect_on_the_gui_thread() -> None:
    """Make core's garbage collection (out-of-memory release, the finder) run on the application's thread.
    Called on the GUI thread before a worker starts; the collector belongs to the application, so it lives as
    long as the application does."""
    app = QCoreApplication.instance()
    if app is None:
        return
    collector = app.findChild(GuiThreadCollector)
    if collector is None:
        collector = GuiThreadCollector(app)
        oom.collect_garbage_with(collector)
