"""Shared constants and helpers for the GUI tests (fixtures live in conftest.py)."""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QObject, QThread, Slot

from gpu_train_monitor.config.run_config import RunConfig

# a run that ends by itself after a few steps (tiny-cnn on the CPU: under a second); tests that need a run
# going use ENDLESS, so FAST only has to finish, with a report or two on the way
FAST = RunConfig(
    model="tiny-cnn", device="cpu", synthetic_samples=512, batch_size=32, max_steps=6, report_interval=0.02
)
# a run that does not end by itself within a test: it has to be paused or stopped
ENDLESS = FAST.replace(max_steps=None, epochs=10_000)


def running_qthreads() -> list[QThread]:
    """Every QThread wrapper Python holds whose thread is still running."""
    gc.collect()
    found = []
    for obj in gc.get_objects():
        try:
            if issubclass(type(obj), QThread) and obj.isRunning():  # type(): no __getattr__ on odd objects
                found.append(obj)
        except RuntimeError:  # a wrapper whose C++ object is already deleted
            continue
    return found


THREAD_GRACE_MS = 2000  # a thread told to stop ends within a step; longer means it was left running


def fail_if_qthreads_left(qtbot, grace_ms: int = THREAD_GRACE_MS) -> None:
    """Fail (pytest.fail) when QThreads are still running after `grace_ms` of processing events; they are
    stopped first, so one failure does not take the rest of the suite with it."""
    import pytest

    if not running_qthreads():
        return
    try:
        qtbot.waitUntil(lambda: not running_qthreads(), timeout=grace_ms)
    except qtbot.TimeoutError:
        left = running_qthreads()
        names = ", ".join(thread.objectName() or type(thread).__name__ for thread in left)
        for thread in left:
            thread.quit()
            thread.wait(30_000)
        pytest.fail(f"{len(left)} QThread(s) still running after the test: {names}", pytrace=False)


def native_threads_named(name: str) -> list[str]:
    """OS threads of this process called `name` (QThread names its native thread after objectName)."""
    import os

    task_dir = "/proc/self/task"
    names = []
    for tid in os.listdir(task_dir):
        try:
            with open(f"{task_dir}/{tid}/comm", encoding="utf-8") as f:
                names.append(f.read().strip())
        except OSError:  # the thread ended while we looked
            continue
    return [n for n in names if n == name]


class EventRecorder(QObject):
    """Lives in the GUI thread: records each run event (and the thread its slot ran in) as it arrives."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[object] = []
        self.threads: set[int] = set()
        self.crashes: list[str] = []

    @Slot(object)
    def on_event(self, event: object) -> None:
        self.events.append(event)
        self.threads.add(threading.get_ident())

    @Slot(str)
    def on_crash(self, message: str) -> None:
        self.crashes.append(message)

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]
