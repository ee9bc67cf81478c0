"""Compare and the batch-size finder in a window connected to another machine, for real but local: ssh is replaced
by `tests.support.local_ssh`, which runs the agent command here on a "remote" store of its own. With one of that
machine's devices in the form, a comparison trains there and the window races it as a local one (both runs, the
headline), the runs land in the window's store under their uids there; Stop during another one stops it there; the
finder searches there and its answer goes into the form."""

from __future__ import annotations

import shlex
import sys

import pytest

from gpu_train_monitor.gui.window.main_window import MainWindow
from gpu_train_monitor.store.run_store import RunStore
from tests.support.gui_support import FAST
from tests.support.local_ssh import LOCAL_SSH
from tests.support.remote_stores import kill_processes_mentioning

WAIT_MS = 90_000  # the agent and the job there each import torch on a shared 2-core machine
HOST = "gpu-box"


@pytest.fixture
def connected_window(qtbot, settings, tmp_path, monkeypatch):
    """A window connected to a local agent on its own store, the form's device that machine's CPU."""
    remote_store = tmp_path / "remote" / "runs.sqlite3"
    remote_store.parent.mkdir()
    monkeypatch.setenv("GPU_TRAIN_MONITOR_SSH", LOCAL_SSH)
    window = MainWindow(settings=settings, runs_db=str(tmp_path / "runs.sqlite3"))
    qtbot.addWidget(window)
    window.on_torch_ready()
    window.parts.form.set_config(FAST.replace(max_steps=24, report_interval=0.05))
    window.show()
    agent = f"{shlex.quote(sys.executable)} -m gpu_train_monitor agent --runs-db {shlex.quote(str(remote_store))}"
    with qtbot.waitSignal(window.parts.connection.connected, timeout=WAIT_MS):
        assert window.parts.remote.connect_to(HOST, agent) is None
    combo = window.parts.form.widgets["device"]
    combo.setCurrentIndex(combo.findData(f"cpu@{HOST}"))
    assert window.parts.form.remote_host() == HOST and window.parts.form.valid, window.parts.form.message
    yield window, remote_store
    window.parts.connection.close()
    kill_processes_mentioning(remote_store.parent)  # a job there left by a failed test: it was detached


def test_a_comparison_on_the_remote_races_in_the_window_and_is_recorded_here(qtbot, connected_window, tmp_path):
    window, remote_store = connected_window
    assert window.parts.buttons.compare_button.isEnabled(), window.parts.buttons.compare_button.toolTip()
    assert window.start_comparison([{"batch_size": 8}, {"batch_size": 16}], "batch size") is None
    qtbot.waitUntil(lambda: window.parts.compare.result is not None, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=WAIT_MS)
    result = window.parts.compare.result
    assert result.status == "completed" and [run.label for run in result.runs] == ["batch_size=8", "batch_size=16"]
    assert all(run.samples_per_s and run.steps == 24 for run in result.runs)
    lines = window.parts.view.log.lines()
    assert any("comparison completed: " in line for line in lines), lines[-5:]
    assert any("run 2 of 2: batch_size=16" in line for line in lines)
    assert len(window.parts.view.loss_plot.data) > 0  # the live plots followed the runs as they came
    assert window.parts.buttons.compare_button.isEnabled()  # the window is ready for the next
    with RunStore(remote_store, readonly=True) as there, RunStore(tmp_path / "runs.sqlite3", readonly=True) as here:
        remote_runs = {row.uid: row for row in there.list_runs()}
        local_runs = {row.uid: row for row in here.list_runs()}
        assert set(local_runs) == set(remote_runs) and len(local_runs) == 2
        for uid, row in local_runs.items():
            assert row.label == remote_runs[uid].label and row.host == remote_runs[uid].host
            assert row.status == "completed" and row.steps == 24
            assert here.steps(row.id).losses == there.steps(remote_runs[uid].id).losses


def test_stop_during_a_remote_comparison_stops_it_there(qtbot, connected_window):
    window, _ = connected_window
    window.parts.form.set_batch_size(8)
    window.parts.form.widgets["max_steps"].setValue(100_000)
    assert window.start_comparison([{"batch_size": 8}, {"batch_size": 16}], "batch size") is None
    qtbot.waitUntil(lambda: len(window.parts.view.loss_plot.data) > 0, timeout=WAIT_MS)  # the first run trains there
    qtbot.waitUntil(window.parts.buttons.stop_button.isEnabled, timeout=WAIT_MS)
    window.parts.buttons.stop_button.click()
    qtbot.waitUntil(lambda: window.parts.compare.result is not None, timeout=WAIT_MS)
    assert window.parts.compare.result.status == "stopped"
    qtbot.waitUntil(lambda: not window.controller.running, timeout=WAIT_MS)
    assert any("comparison stopped: " in line for line in window.parts.view.log.lines())


def test_the_finder_searches_on_the_remote_and_its_answer_goes_into_the_form(qtbot, connected_window):
    window, _ = connected_window
    panel = window.parts.insight.finder_panel
    assert panel.find_button.isEnabled(), panel.find_button.toolTip()
    panel.capacity.setValue(2.0)  # GB
    panel.find_button.click()
    assert f"on {HOST}" in panel.result_label.text()
    qtbot.waitUntil(lambda: panel.result is not None or not panel.running, timeout=WAIT_MS)
    assert panel.result is not None, panel.result_label.text()
    assert panel.trials and panel.result.batch_size > 0
    assert panel.result_label.text().startswith("Largest batch that fits: ")
    panel.use_button.click()
    assert window.parts.form.value("batch_size") == panel.result.batch_size
