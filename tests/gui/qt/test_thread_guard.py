"""The suite's guard against QThreads left running by a test (tests/gui/conftest.py uses it after each)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QThread, QTimer

from tests.support.gui_support import fail_if_qthreads_left, running_qthreads


def test_a_thread_left_running_fails_the_check_and_is_stopped(qtbot):
    thread = QThread()
    thread.setObjectName("left-behind")
    thread.start()  # runs an event loop until told to quit
    qtbot.waitUntil(thread.isRunning, timeout=2000)
    with pytest.raises(pytest.fail.Exception, match="1 QThread\\(s\\) still running after the test: left-behind"):
        fail_if_qthreads_left(qtbot, grace_ms=100)
    assert thread.isFinished()  # stopped, so the next test starts clean
    assert running_qthreads() == []


def test_a_thread_that_ends_within_the_grace_period_passes(qtbot):
    thread = QThread()
    thread.start()
    qtbot.waitUntil(thread.isRunning, timeout=2000)
    QTimer.singleShot(50, thread.quit)  # ends while the check waits (events keep being processed)
    fail_if_qthreads_left(qtbot, grace_ms=5000)
    assert thread.wait(5000)
    assert running_qthreads() == []
