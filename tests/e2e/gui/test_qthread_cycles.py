"""Thread lifecycles: many runs started and stopped leave nothing running; QThread churn does not abort."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

from PySide6.QtCore import Qt

from gpu_train_monitor.gui.views.window_state import WindowState
from tests.support.gui_support import ENDLESS, native_threads_named

RUN_TIMEOUT_MS = 60_000

# The shape of RunController's lifecycle, without training: PySide6 6.12.0 on CPython 3.11 aborted with
# "Fatal Python error: none_dealloc" (exit 134) after a few hundred of these cycles; this guards that the
# lifecycle used here (worker deleted with its last reference, thread with deleteLater) does not.
CYCLES_SCRIPT = textwrap.dedent("""
    import sys, time
    from PySide6.QtCore import QCoreApplication, QEvent, QEventLoop, QObject, QThread, Signal, Slot

    app = QCoreApplication(sys.argv[:1])

    class Worker(QObject):
        finished = Signal()

        @Slot()
        def run(self):
            self.finished.emit()

    class Receiver(QObject):  # lives in the main thread: finished arrives queued, like the window's slots
        def __init__(self):
            super().__init__()
            self.done = 0

        @Slot()
        def on_finished(self):
            self.done += 1

    receiver = Receiver()
    cycles = int(sys.argv[1])
    for i in range(cycles):
        thread = QThread()
        worker = Worker()
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        worker.finished.connect(receiver.on_finished)
        thread.start()
        deadline = time.monotonic() + 10
        while receiver.done <= i:
            if time.monotonic() > deadline:
                print("worker never finished in cycle", i)
                sys.exit(3)
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        thread.quit()
        if not thread.wait(10_000):
            print("thread did not end in cycle", i)
            sys.exit(4)
        del worker
        thread.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    print("cycles", receiver.done)
""")


def test_1000_qthread_cycles_exit_cleanly_in_a_fresh_process():
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run(
        [sys.executable, "-c", CYCLES_SCRIPT, "1000"], env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    assert result.stdout.split() == ["cycles", "1000"]
    assert "Fatal Python error" not in result.stderr


def test_50_start_stop_cycles_leave_no_thread_running(qtbot, window, running_qthreads):
    window.parts.form.set_config(ENDLESS)
    python_threads_before = threading.active_count()
    states = []
    for cycle in range(50):
        assert window.parts.buttons.start_button.isEnabled(), (
            f"cycle {cycle}: {window.parts.buttons.start_button.toolTip()}"
        )
        qtbot.mouseClick(window.parts.buttons.start_button, Qt.MouseButton.LeftButton)
        assert window.controller.running
        if cycle % 2:  # every other cycle stops a run that is already training
            qtbot.waitUntil(lambda: window.state is WindowState.RUNNING, timeout=RUN_TIMEOUT_MS)
        with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
            qtbot.mouseClick(window.parts.buttons.stop_button, Qt.MouseButton.LeftButton)
        states.append(ended.args[0])
        assert not window.controller.running
    assert states == [WindowState.STOPPED] * 50
    assert window.state is WindowState.STOPPED and window.parts.buttons.start_button.isEnabled()
    window.shutdown_predictions()  # the last run's step predicted beside its breakdown: a thread of its own, waited for
    assert running_qthreads() == []  # run_ended comes after the thread's bounded wait: it has ended
    # Qt names each run's OS thread after the QThread; the last one's may take a moment to leave the kernel's list
    # after its QThread has returned from wait(), on a loaded machine
    qtbot.waitUntil(lambda: native_threads_named("training") == [], timeout=5_000)
    assert threading.active_count() <= python_threads_before, [t.name for t in threading.enumerate()]
