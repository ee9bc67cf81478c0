"""A data-parallel run from the window, for real: Start with 2 CPU processes starts `python -m gpu_train_monitor run
--nproc 2` as a child, the window finds the run in its store and follows it live in the Runs tab, Stop and closing the
window end it with no process left, and an error before anything was recorded is one line."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt, QTimer

from gpu_train_monitor.gui.views.window_state import WindowState
from gpu_train_monitor.gui.window.main_window import MainWindow
from gpu_train_monitor.store.run_store import RunStore
from tests.support.gui_support import FAST
from tests.support.processes import left_alive

# 2 processes of 16 images a step, until stopped (tiny-cnn on the CPU: a step takes milliseconds)
ENDLESS_DP = FAST.replace(nproc=2, max_steps=None, epochs=10_000)
START_TIMEOUT_MS = 45_000  # the child and its ranks each import torch on a shared 2-core machine


@pytest.fixture
def dp_window(qtbot, settings, tmp_path):
    window = MainWindow(settings=settings, runs_db=str(tmp_path / "runs.sqlite3"))
    qtbot.addWidget(window)  # closed at teardown: a run still going is stopped and its processes killed
    window.on_torch_ready()
    window.parts.form.set_config(ENDLESS_DP)
    window.show()
    yield window
    window.controller.launcher.kill_now()


def start_and_follow(qtbot, window: MainWindow) -> tuple[int, float]:
    """Click Start, wait for the recorded run to be followed live; (its id, seconds to the first point)."""
    assert window.parts.form.labels["nproc"].text() == "CPU processes"
    assert window.parts.buttons.start_button.isEnabled(), window.parts.buttons.start_button.toolTip()
    clicked = time.monotonic()
    qtbot.mouseClick(window.parts.buttons.start_button, Qt.MouseButton.LeftButton)
    assert window.state is WindowState.STARTING and window.controller.data_parallel
    assert not window.parts.buttons.start_button.isEnabled() and window.parts.buttons.stop_button.isEnabled()
    launcher = window.controller.launcher
    qtbot.waitUntil(lambda: launcher.run_id is not None, timeout=START_TIMEOUT_MS)
    run_id = launcher.run_id
    assert window.state is WindowState.RUNNING
    assert (
        window.parts.tabs.currentWidget() is window.parts.history
    )  # the Runs tab, with the run opened in its own window
    view = window.parts.history.views[run_id]
    qtbot.waitUntil(lambda: len(view.loss_plot.data) > 0, timeout=START_TIMEOUT_MS)
    return run_id, time.monotonic() - clicked


def recorded(tmp_path, run_id: int, kinds: tuple[str, ...]) -> list[str]:
    with RunStore(tmp_path / "runs.sqlite3", readonly=True) as store:
        return [event.kind for event in store.events(run_id, kinds=kinds)]


def test_pause_clear_and_stop_reach_a_two_process_run_which_ends_stopped_with_no_process_left(
    qtbot, dp_window, tmp_path
):
    window = dp_window
    run_id, first_point_s = start_and_follow(qtbot, window)
    print(f"Start to the first live point: {first_point_s:.1f} s")
    launcher = window.controller.launcher
    processes = launcher.processes()
    with RunStore(tmp_path / "runs.sqlite3", readonly=True) as store:
        row = store.run(run_id)
    assert row.status == "running" and row.pid in {p.pid for p in processes} and row.pid != launcher.process.pid
    assert row.world_size == 2
    assert "recording as run" in "\n".join(window.parts.view.log.lines())
    # the main window shows the run as it trains, read back from the store (it said Step 0 / 0, empty plots)
    qtbot.waitUntil(lambda: len(window.parts.view.loss_plot.data) > 0, timeout=START_TIMEOUT_MS)
    step, total = window.parts.view.stats.values["step"].text().replace(",", "").split(" / ")
    assert int(step) > 0 and int(total) > 0 and window.parts.view.stats.values["speed"].text() != ""
    assert len(window.parts.view.memory_plot.data) > 0

    qtbot.mouseClick(window.parts.buttons.pause_button, Qt.MouseButton.LeftButton)  # SIGUSR2 to rank 0
    qtbot.waitUntil(lambda: window.state is WindowState.PAUSED, timeout=10_000)  # once the run recorded it
    assert window.parts.buttons.pause_button.text() == "Resume"
    qtbot.mouseClick(window.parts.buttons.pause_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.state is WindowState.RUNNING, timeout=10_000)
    assert recorded(tmp_path, run_id, ("RunPaused", "RunResumed")) == ["RunPaused", "RunResumed"]
    assert (
        not window.parts.buttons.clear_button.isEnabled()
    )  # the CPU has no cache; the signal reaches the run all the same:
    window.controller.request_cache_clear()  # SIGUSR1 to rank 0
    qtbot.waitUntil(lambda: recorded(tmp_path, run_id, ("CacheCleared",)) == ["CacheCleared"], timeout=10_000)

    with qtbot.waitSignal(window.run_ended, timeout=START_TIMEOUT_MS) as ended:
        qtbot.mouseClick(window.parts.buttons.stop_button, Qt.MouseButton.LeftButton)  # SIGINT to rank 0
    assert ended.args == [WindowState.STOPPED]
    assert window.parts.run_control.label.text() == "stopped"
    with RunStore(tmp_path / "runs.sqlite3", readonly=True) as store:
        assert store.run(run_id).status == "stopped"
    assert left_alive(processes) == []
    assert not window.controller.running and window.parts.buttons.start_button.isEnabled()
    assert f"run {run_id} stopped" in "\n".join(window.parts.view.log.lines())


def test_closing_the_window_mid_run_leaves_no_process(qtbot, dp_window, tmp_path):
    window = dp_window
    run_id, _ = start_and_follow(qtbot, window)
    processes = window.controller.launcher.processes()
    shown: list[str | None] = []  # what the window says while it waits (its event loop keeps running)
    QTimer.singleShot(
        300,
        lambda: shown.append(
            window.parts.launched.closing_dialog.labelText()
            if window.parts.launched.closing_dialog is not None
            else None
        ),
    )
    closed_at = time.monotonic()
    window.close()
    took = time.monotonic() - closed_at
    print(f"closing mid-run took {took:.1f} s")
    assert took < 20  # STOP_WAIT_S at most for the processes to stop, then they are killed
    assert not window.isVisible()
    assert shown == ["Stopping 2 CPU processes…"]
    assert left_alive(processes) == []
    assert not window.controller.running
    with RunStore(tmp_path / "runs.sqlite3", readonly=True) as store:
        assert store.run(run_id).status == "stopped"  # rank 0 was told to stop, and did


def test_a_launch_that_fails_before_recording_shows_its_error_line_and_is_idle_again(qtbot, dp_window, tmp_path):
    window = dp_window
    missing = tmp_path / "missing.pt"
    with qtbot.waitSignal(window.run_ended, timeout=START_TIMEOUT_MS) as ended:
        window.start_run(ENDLESS_DP, resume=str(missing))  # the CLI refuses it: one error line, exit 2
        assert window.controller.data_parallel and not window.parts.buttons.start_button.isEnabled()
    assert ended.args == [WindowState.FAILED]
    errors = [line for line in window.parts.view.log.lines() if "ERROR: " in line]
    assert len(errors) == 1 and "ERROR: the 2 CPU processes could not start: " in errors[0]
    assert str(missing) in errors[0] and "gpu-train-monitor: error" not in errors[0]
    assert "Traceback" not in "\n".join(window.parts.view.log.lines())
    assert window.parts.buttons.start_button.isEnabled() and not window.controller.running
    assert left_alive(window.controller.launcher.processes()) == []


def test_stop_while_the_processes_are_still_starting_stops_the_run_once_it_is_recorded(qtbot, dp_window, tmp_path):
    window = dp_window
    with qtbot.waitSignal(window.run_ended, timeout=START_TIMEOUT_MS) as ended:
        qtbot.mouseClick(window.parts.buttons.start_button, Qt.MouseButton.LeftButton)
        processes = window.controller.launcher.processes()
        qtbot.mouseClick(
            window.parts.buttons.stop_button, Qt.MouseButton.LeftButton
        )  # before any rank has recorded anything
        assert window.state is WindowState.STOPPING and not window.parts.buttons.stop_button.isEnabled()
    assert ended.args == [WindowState.STOPPED], "\n".join(window.parts.view.log.lines())
    run_id = window.controller.launcher.run_id
    if run_id is None:  # the ranks took longer than SETUP_STOP_GRACE_S to start: Ctrl+C to them all
        assert "the 2 CPU processes were stopped before training started" in "\n".join(window.parts.view.log.lines())
    else:  # recorded within the grace: told to stop at once
        with RunStore(tmp_path / "runs.sqlite3", readonly=True) as store:
            assert store.run(run_id).status == "stopped"
    assert "ERROR" not in "\n".join(window.parts.view.log.lines())
    assert left_alive(processes + window.controller.launcher.processes()) == []


def test_a_launched_run_missing_from_the_store_ends_the_launch_idle_with_no_temporary_folder(
    qtbot, dp_window, tmp_path, monkeypatch
):
    """The child records its run under the uid the window handed it, then the run goes from the store (deleted,
    or the store replaced) while the child still runs: the launch ends with one line saying so, the window is
    ready again, and the launcher's temporary folder is gone."""
    import sys

    from gpu_train_monitor.gui.launch import launcher as rank_launcher

    window = dp_window
    store_path = tmp_path / "runs.sqlite3"
    RunStore(store_path).close()
    child = [sys.executable, "-c", RECORDS_A_RUN_UNTIL_DELETED, str(store_path)]
    monkeypatch.setattr(rank_launcher, "command_line", lambda config, store, resume=None: child)
    with qtbot.waitSignal(window.run_ended, timeout=START_TIMEOUT_MS) as ended:
        window.start_run(ENDLESS_DP)
        launcher = window.controller.launcher
        folder = launcher.folder
        assert folder is not None and folder.is_dir()
        qtbot.waitUntil(lambda: launcher.run_id is not None, timeout=START_TIMEOUT_MS)  # found by its uid
        run_id = launcher.run_id
        with RunStore(store_path) as store:
            assert store.run(run_id).uid == launcher.run_uid
            store.delete(run_id)
    assert ended.args == [WindowState.FAILED]
    errors = [line for line in window.parts.view.log.lines() if "ERROR: " in line]
    assert len(errors) == 1 and f"run {run_id} is no longer in the run store" in errors[0], (
        window.parts.view.log.lines()
    )
    assert window.parts.buttons.start_button.isEnabled() and not window.controller.running
    assert not window.parts.buttons.stop_button.isEnabled()
    assert not folder.exists()


# a stand-in for the CLI: records a running run under the uid it was handed, then waits until it is gone
RECORDS_A_RUN_UNTIL_DELETED = """
import dataclasses, os, sqlite3, sys, time
from gpu_train_monitor.distributed.env import ENV_RUN_UID
from gpu_train_monitor.store.recorder import RunRecorder
from tests.support.events import started
uid, path = os.environ[ENV_RUN_UID], sys.argv[1]
recorder = RunRecorder(path)
recorder(dataclasses.replace(started(None), run_uid=uid))
recorder.close()
db, deadline = sqlite3.connect(path), time.monotonic() + 60
while db.execute("SELECT 1 FROM runs WHERE uid = ?", (uid,)).fetchone() and time.monotonic() < deadline:
    time.sleep(0.05)
"""
