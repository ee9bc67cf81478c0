"""Core's garbage collection in a worker thread (out-of-memory release, the finder) runs on the GUI thread in the
window's process: Qt objects in the garbage are destroyed where they must be."""

from __future__ import annotations

import gc
import threading

from gpu_train_monitor.gui.qt.background import BackgroundTask
from gpu_train_monitor.memory import oom


class Cycle:
    """Garbage only the cycle collector frees, which notes the thread that freed it."""

    freed_in: list[str] = []

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        Cycle.freed_in.append(threading.current_thread().name)


def test_a_worker_s_collection_runs_on_the_gui_thread(qtbot):
    task = BackgroundTask(thread_name="worker")  # installs the application's collector
    gc.collect()
    Cycle.freed_in.clear()
    gc.disable()  # only the collection asked for may free the cycle
    try:
        Cycle()
        with qtbot.waitSignal(task.ended, timeout=10_000):
            task.start(lambda report, cancelled: oom.collect_garbage())
    finally:
        gc.enable()
    assert Cycle.freed_in == [threading.main_thread().name]


def test_on_the_gui_thread_it_collects_at_once(qtbot):
    BackgroundTask(thread_name="worker")
    gc.collect()
    Cycle.freed_in.clear()
    gc.disable()
    try:
        Cycle()
        oom.collect_garbage()  # no event loop runs here: a queued request would wait, and time out
    finally:
        gc.enable()
    assert Cycle.freed_in == [threading.main_thread().name]
