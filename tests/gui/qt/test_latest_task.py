"""The latest of a stream of requests, worked out off the GUI thread: one job for a burst of requests, an older
job told to stop when a newer request comes, and only the latest request's answer brought back."""

from __future__ import annotations

import threading

from gpu_train_monitor.gui.qt.latest_task import LatestTask


def test_a_burst_of_requests_runs_the_last_one_only(qtbot):
    task = LatestTask(delay_ms=50)
    ran, threads = [], []

    def job(value):
        def run(_report, _cancelled):
            ran.append(value)
            threads.append(threading.get_ident())
            return value

        return run

    with qtbot.waitSignal(task.answered, timeout=5_000) as answered:
        for value in (1, 2, 3):  # typed "1", "12", "123": one question, the last
            task.request(job(value))
    assert answered.args == [3] and ran == [3]
    assert threads[0] != threading.get_ident()  # worked out off the GUI thread
    qtbot.waitUntil(lambda: not task.busy, timeout=5_000)


def test_a_newer_request_stops_the_running_job_and_its_answer_is_dropped(qtbot):
    task = LatestTask(delay_ms=0)
    started, stopped = threading.Event(), threading.Event()
    answers, progress = [], []
    task.answered.connect(answers.append)
    task.progress.connect(progress.append)

    def slow(report, cancelled):
        started.set()
        while not cancelled():  # a job of many parts checks between them
            threading.Event().wait(0.01)
        stopped.set()
        report("old progress")
        return "old"

    def new(report, _cancelled):
        report("new progress")
        return "new"

    task.request(slow)
    qtbot.waitUntil(started.is_set, timeout=5_000)
    task.request(new)
    qtbot.waitUntil(lambda: answers == ["new"], timeout=5_000)
    assert stopped.is_set()
    assert progress == ["new progress"]  # the old job's report, after the newer request, is not shown
    qtbot.waitUntil(lambda: not task.busy, timeout=5_000)


def test_a_dropped_request_brings_nothing_back(qtbot):
    task = LatestTask(delay_ms=0)
    release = threading.Event()
    answers = []
    task.answered.connect(answers.append)
    task.request(lambda _report, _cancelled: release.wait(5) and "late")
    task.drop()  # the question no longer stands (a run started)
    release.set()
    assert task.shutdown(5_000)
    qtbot.wait(50)
    assert answers == []
