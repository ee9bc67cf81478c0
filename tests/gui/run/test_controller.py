"""RunController: one QThread per run, events forwarded to the GUI thread, commands straight to the session."""

from __future__ import annotations

import threading

import pytest

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.engine.checkpoint_files import CheckpointPolicy
from gpu_train_monitor.events.events import (
    CacheCleared,
    CheckpointSaved,
    EpochEnded,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    StepsReported,
)
from gpu_train_monitor.gui.run.controller import RunController
from tests.support.gui_support import ENDLESS, FAST, EventRecorder, running_qthreads

TIMEOUT_MS = 60_000


@pytest.fixture
def controller(qtbot):
    controller = RunController()
    recorder = EventRecorder()
    controller.event.connect(recorder.on_event)
    controller.crashed.connect(recorder.on_crash)
    controller.recorder = recorder
    yield controller
    controller.shutdown(30_000)


def test_a_run_delivers_its_events_in_the_gui_thread_and_cleans_up(qtbot, controller):
    with qtbot.waitSignal(controller.run_finished, timeout=TIMEOUT_MS):
        controller.start(FAST)
        assert controller.running
        assert controller.session is not None
    events = controller.recorder.events
    assert isinstance(events[0], RunStarted)
    assert isinstance(events[-1], RunFinished) and events[-1].status == "completed"
    reports = controller.recorder.of(StepsReported)
    assert sum(len(r.losses) for r in reports) == FAST.max_steps
    assert len(controller.recorder.of(EpochEnded)) == 1
    assert controller.recorder.threads == {threading.get_ident()}  # slots ran in the GUI thread
    assert not controller.running and controller.session is None
    assert running_qthreads() == []


def test_only_one_run_at_a_time(qtbot, controller):
    controller.start(ENDLESS)
    with pytest.raises(RuntimeError, match="already active"):
        controller.start(FAST)
    assert controller.shutdown(30_000)
    assert not controller.running


def test_commands_without_a_run_do_nothing(controller):
    controller.pause()
    controller.resume()
    controller.request_stop()
    controller.request_cache_clear()
    assert controller.shutdown() is True
    assert not controller.running and controller.recorder.events == []


def test_pause_resume_and_stop_go_to_the_session(qtbot, controller):
    controller.start(ENDLESS)
    rec = controller.recorder
    qtbot.waitUntil(lambda: bool(rec.of(StepsReported)), timeout=TIMEOUT_MS)
    controller.pause()
    qtbot.waitUntil(lambda: bool(rec.of(RunPaused)), timeout=TIMEOUT_MS)
    step = rec.of(RunPaused)[0].step
    assert rec.of(StepsReported)[-1].step == step  # the steps before the pause were all reported
    for clears in (1, 2):  # each clear the paused loop answers shows it still parked at the same step
        controller.request_cache_clear()
        qtbot.waitUntil(lambda: len(rec.of(CacheCleared)) == clears, timeout=TIMEOUT_MS)
        assert rec.of(CacheCleared)[-1].step == step
    assert rec.of(StepsReported)[-1].step == step  # nothing trained while paused
    controller.resume()
    qtbot.waitUntil(lambda: rec.of(StepsReported)[-1].step > step, timeout=TIMEOUT_MS)
    assert rec.of(RunResumed)[0].step == step
    with qtbot.waitSignal(controller.run_finished, timeout=TIMEOUT_MS):
        controller.request_stop()
    assert rec.events[-1].status == "stopped"


def test_cache_clear_requested_mid_run_comes_back_as_an_event(qtbot, controller, monkeypatch):
    import gpu_train_monitor.engine.session

    monkeypatch.setattr(gpu_train_monitor.engine.session, "clear_cache", lambda device: 2_000_000)
    controller.start(ENDLESS)
    rec = controller.recorder
    qtbot.waitUntil(lambda: bool(rec.of(StepsReported)), timeout=TIMEOUT_MS)
    controller.request_cache_clear()
    qtbot.waitUntil(lambda: bool(rec.of(CacheCleared)), timeout=TIMEOUT_MS)
    cleared = rec.of(CacheCleared)[0]
    assert cleared.freed_bytes == 2_000_000
    assert cleared.step is not None and cleared.step >= 1  # applied at a step boundary
    assert cleared.memory.device == "cpu"
    assert controller.running  # the run goes on


def test_shutdown_mid_run_ends_the_thread(qtbot, controller):
    controller.start(ENDLESS)
    qtbot.waitUntil(lambda: bool(controller.recorder.of(StepsReported)), timeout=TIMEOUT_MS)
    thread = controller._thread
    assert controller.shutdown(30_000) is True
    assert thread.isFinished()
    assert not controller.running
    assert running_qthreads() == []


def test_an_exception_in_the_session_is_reported_and_the_thread_ends(qtbot, controller, monkeypatch):
    import gpu_train_monitor.engine.session

    def broken_run(self):
        raise ValueError("bad things")

    monkeypatch.setattr(gpu_train_monitor.engine.session.TrainingSession, "run", broken_run)
    with qtbot.waitSignal(controller.run_finished, timeout=TIMEOUT_MS):
        controller.start(FAST)
    assert len(controller.recorder.crashes) == 1
    message = controller.recorder.crashes[0]
    assert message.startswith("ValueError: bad things")
    assert "Traceback" in message  # the details go to the log
    assert not controller.running
    assert running_qthreads() == []


def test_a_comparison_runs_its_sessions_in_one_thread_and_wraps_their_events(qtbot, controller):
    from gpu_train_monitor.compare.events import ComparisonFinished, ComparisonStarted
    from gpu_train_monitor.events.events import ContenderEvent

    with qtbot.waitSignal(controller.run_finished, timeout=TIMEOUT_MS):
        comparison = controller.start_comparison(
            FAST.replace(synthetic_samples=256, max_steps=4), [{"placement": "stream"}, {"placement": "resident"}]
        )
        assert controller.running and controller.session is comparison
        assert not controller.recording_history  # snapshots belong to single runs
    events = controller.recorder.events
    assert isinstance(events[0], ComparisonStarted) and events[0].steps == 4
    assert isinstance(events[-1], ComparisonFinished) and events[-1].result.status == "completed"
    wrapped = events[1:-1]
    assert all(isinstance(e, ContenderEvent) for e in wrapped)
    assert [e.index for e in wrapped if isinstance(e.event, (RunStarted, RunFinished))] == [0, 0, 1, 1]
    assert controller.recorder.threads == {threading.get_ident()}
    assert not controller.running and running_qthreads() == []


def test_a_comparison_that_cannot_run_here_is_refused_before_a_thread_starts(controller):
    from gpu_train_monitor.base.errors import ConfigError

    with pytest.raises(ConfigError, match="configurations 1 and 2 are the same run"):
        controller.start_comparison(FAST, [{"placement": "stream"}, {"placement": "stream"}])
    with pytest.raises(ConfigError, match=r"configuration 2 \(cuda:7\)"):
        controller.start_comparison(FAST, [{"device": "cpu"}, {"device": "cuda:7"}])
    assert not controller.running and running_qthreads() == []


def test_checkpoint_now_saves_the_run_and_start_with_resume_continues_it(qtbot, controller, tmp_path):
    assert controller.request_checkpoint() is False  # no run: nothing to save
    rec = controller.recorder
    controller.start(ENDLESS, checkpoints=CheckpointPolicy(directory=str(tmp_path)))
    qtbot.waitUntil(lambda: bool(rec.of(StepsReported)), timeout=TIMEOUT_MS)
    assert controller.can_checkpoint and controller.request_checkpoint() is True
    qtbot.waitUntil(lambda: bool(rec.of(CheckpointSaved)), timeout=TIMEOUT_MS)
    saved = rec.of(CheckpointSaved)[0]
    first_uid = rec.of(RunStarted)[0].run_uid
    assert saved.reason == "request" and saved.path.startswith(str(tmp_path / first_uid))
    with qtbot.waitSignal(controller.run_finished, timeout=TIMEOUT_MS):
        controller.request_stop()
    with pytest.raises(UserError, match="keeps its checkpoint's batch_size"):  # refused before any thread starts
        controller.start(ENDLESS.replace(batch_size=16), resume=saved.path)
    assert not controller.running

    rec.events.clear()
    with qtbot.waitSignal(controller.run_finished, timeout=TIMEOUT_MS):
        controller.start(ENDLESS.replace(epochs=None, max_steps=saved.step + 3), resume=saved.path)
    started = rec.of(RunStarted)[0]
    assert (started.run_uid, started.start_step) == (first_uid, saved.step)
    assert rec.of(StepsReported)[0].first_step == saved.step + 1
    assert rec.events[-1].status == "completed" and rec.events[-1].step == saved.step + 3


def test_a_data_parallel_run_needs_the_run_store_it_is_followed_through(qtbot, tmp_path):
    controller = RunController(runs_db=tmp_path / "runs.sqlite3", record=False)
    with pytest.raises(
        UserError,
        match="a run of 2 processes is followed through the run store, and this window "
        r"records nothing \(start it with --runs-db PATH\)",
    ):
        controller.start(FAST.replace(nproc=2))
    assert not controller.running and not controller.data_parallel
    assert controller.launcher.store_path == tmp_path / "runs.sqlite3"  # where a recorded one would be looked for
