"""How much of a followed run's row each live chunk carries: all of it once, then only what changed, with the
progress columns at most once a second and a heartbeat alone every ten (a live run's bytes stay small)."""

from __future__ import annotations

from gpu_train_monitor.remote.agent.streams import HEARTBEAT_EVERY_S, PROGRESS_EVERY_S, RunDelta

ROW = {"uid": "u", "status": "running", "steps": 10, "loss_last": 2.0, "heartbeat_at": 100.0, "config": "{...}"}


def test_the_first_chunk_has_the_whole_row_then_only_changes_with_the_uid() -> None:
    delta = RunDelta()
    first = delta.changes(ROW, clock=0.0)
    assert first == ROW
    delta.sent(first, 0.0)
    assert delta.changes(ROW, clock=0.1) == {}
    renamed = {**ROW, "name": "baseline"}
    assert delta.changes(renamed, clock=0.2) == {"uid": "u", "name": "baseline"}


def test_progress_goes_at_most_once_a_second_and_an_ending_at_once() -> None:
    delta = RunDelta()
    delta.sent(delta.changes(ROW, 0.0), 0.0)
    progressed = {**ROW, "steps": 12, "loss_last": 1.9}
    assert delta.changes(progressed, clock=0.2) == {}
    assert delta.changes(progressed, clock=PROGRESS_EVERY_S) == {"uid": "u", "steps": 12, "loss_last": 1.9}
    delta.sent({"uid": "u", "steps": 12, "loss_last": 1.9}, PROGRESS_EVERY_S)
    ended = {**progressed, "steps": 13, "status": "completed"}
    assert delta.changes(ended, clock=PROGRESS_EVERY_S + 0.1) == {"uid": "u", "steps": 13, "status": "completed"}


def test_a_heartbeat_alone_goes_every_ten_seconds() -> None:
    delta = RunDelta()
    delta.sent(delta.changes(ROW, 0.0), 0.0)
    beating = {**ROW, "heartbeat_at": 102.0}
    assert delta.changes(beating, clock=2.0) == {}
    assert delta.changes(beating, clock=HEARTBEAT_EVERY_S) == {"uid": "u", "heartbeat_at": 102.0}
