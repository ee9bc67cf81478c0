"""The loop's one read a step: whatever another thread asks is found at the next step boundary, once."""

from __future__ import annotations

import threading

from gpu_train_monitor.engine.strategy import OneProcess, Requests
from gpu_train_monitor.events.controls import RunControls


def test_a_step_with_nothing_asked_reads_nothing_and_each_request_is_found_once() -> None:
    controls, strategy = RunControls(), OneProcess.__new__(OneProcess)
    assert strategy.requests(controls) == Requests() and not controls.take_asked()
    controls.request_cache_clear()
    controls.request_checkpoint("a.pt")
    controls.request_snapshot("s.pickle")
    asked = strategy.requests(controls)
    assert asked.clear and asked.checkpoints == ["a.pt"] and asked.snapshots == ["s.pickle"]
    again = strategy.requests(controls)
    assert not again.clear and not again.checkpoints and not again.snapshots
    controls.pause()
    assert strategy.requests(controls).pause
    controls.request_stop()
    assert strategy.requests(controls).stop


def test_requests_made_from_another_thread_while_the_loop_reads_are_never_lost() -> None:
    controls, strategy = RunControls(), OneProcess.__new__(OneProcess)
    made, found = 2000, 0
    done = threading.Event()

    def ask() -> None:
        for _ in range(made):
            controls.request_checkpoint(None)
        done.set()

    thread = threading.Thread(target=ask)
    thread.start()
    while not done.is_set():
        found += len(strategy.requests(controls).checkpoints)
    thread.join()
    found += len(strategy.requests(controls).checkpoints)
    assert found == made
