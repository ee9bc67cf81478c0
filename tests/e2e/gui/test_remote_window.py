"""The window on a machine reached over SSH, for real but local: ssh is replaced by `tests.support.local_ssh`
(GPU_TRAIN_MONITOR_SSH), which runs the agent command here, on a store of its own (the "remote" store). The
window connects and lists that machine's devices, Start on one of them runs `run --remote` as its child, the
run's losses and memory show as it trains, the connection drops mid-run (every agent process killed), the
status bar says so and comes back by itself, the child reconnects and backfills, Stop reaches the run there
through the child, and the window's store holds every step the remote one does. File ▸ Watch a script… runs
the script there while connected."""

from __future__ import annotations

import shlex
import sys
import time

import psutil
import pytest
from PySide6.QtCore import Qt, QTimer

from gpu_train_monitor.gui.views.window_state import WindowState
from gpu_train_monitor.gui.window.main_window import MainWindow
from gpu_train_monitor.store.run_store import RunStore
from tests.e2e.gui.test_watch_a_script import TRAIN_SCRIPT
from tests.support.gui_support import ENDLESS
from tests.support.local_ssh import LOCAL_SSH
from tests.support.processes import left_alive

WAIT_MS = 90_000  # the agent, the child and the run there each import torch on a shared 2-core machine
HOST = "gpu-box"


def processes_on(store) -> list[psutil.Process]:
    """Every process of ours whose command line names the remote store (agents, their shells, the run there)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if any(str(store) in word for word in process.info["cmdline"] or ()):
                found.append(process)
        except psutil.Error:
            continue
    return found


def kill_agents(store) -> int:
    """Drop every connection: kill the agents (and the shells that run them), never the run they started."""
    agents = [p for p in processes_on(store) if "agent" in p.info["cmdline"]]
    for process in agents:
        process.kill()
    psutil.wait_procs(agents, timeout=10)
    return len(agents)


@pytest.fixture
def remote_window(qtbot, settings, tmp_path, monkeypatch):
    remote_store = tmp_path / "remote" / "runs.sqlite3"
    remote_store.parent.mkdir()
    monkeypatch.setenv("GPU_TRAIN_MONITOR_SSH", LOCAL_SSH)  # the child's `run --remote` inherits it
    window = MainWindow(settings=settings, runs_db=str(tmp_path / "runs.sqlite3"))
    qtbot.addWidget(window)
    window.on_torch_ready()
    window.parts.form.set_config(ENDLESS.replace(report_interval=0.05))
    window.show()
    agent = shlex.join([sys.executable, "-m", "gpu_train_monitor", "agent", "--runs-db", str(remote_store)])
    agent += f" --allow {shlex.quote(str(tmp_path))}"  # the scripts it may watch there
    yield window, agent, remote_store
    window.controller.launcher.kill_now()
    window.parts.connection.close()
    for process in processes_on(remote_store):  # a run there left by a failed test: it was detached
        process.kill()


def test_a_remote_run_survives_a_dropped_connection_and_every_step_reaches_the_window(qtbot, remote_window, tmp_path):
    window, agent, remote_store = remote_window
    label = window.parts.remote.label
    with qtbot.waitSignal(window.parts.connection.connected, timeout=WAIT_MS):
        assert window.parts.remote.connect_to(HOST, agent) is None
    assert window.parts.form.widgets["device"].findData(f"cpu@{HOST}") >= 0
    combo = window.parts.form.widgets["device"]
    combo.setCurrentIndex(combo.findData(f"cpu@{HOST}"))
    assert window.parts.form.remote_host() == HOST and window.parts.form.valid, window.parts.form.message
    assert window.parts.device_watch.label.text().startswith(
        "device: cpu ("
    ) and window.parts.device_watch.label.text().endswith(f" on {HOST}")
    qtbot.waitUntil(lambda: label.text().endswith(" ms"), timeout=WAIT_MS)  # "gpu-box · 12 ms"
    assert label.text().startswith(f"{HOST} · ")
    qtbot.waitUntil(lambda: len(window.parts.view.memory_plot.data) > 0, timeout=WAIT_MS)  # the readings at rest
    assert (
        window.parts.buttons.compare_button.isEnabled() and window.parts.insight.finder_panel.find_button.isEnabled()
    )  # they run there too
    assert (
        not window.parts.insight.record_history.isEnabled() and HOST in window.parts.insight.record_history.toolTip()
    )  # only here

    started = time.monotonic()
    qtbot.mouseClick(window.parts.buttons.start_button, Qt.MouseButton.LeftButton)
    launcher = window.controller.launcher
    assert window.controller.data_parallel and launcher.machine is not None
    assert f"--remote={HOST}" in launcher.process.args
    qtbot.waitUntil(lambda: launcher.run_id is not None, timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: len(window.parts.view.loss_plot.data) > 0 and len(window.parts.view.memory_plot.data) > 0,
        timeout=WAIT_MS,
    )
    print(f"Start to the first mirrored point: {time.monotonic() - started:.1f} s")
    assert window.state is WindowState.RUNNING
    with RunStore(tmp_path / "runs.sqlite3", readonly=True) as store:
        row = store.run(launcher.run_id)
    assert row.uid == launcher.run_uid and row.status == "running"
    qtbot.mouseClick(
        window.parts.buttons.pause_button, Qt.MouseButton.LeftButton
    )  # SIGUSR2 to the child, forwarded there
    qtbot.waitUntil(lambda: window.state is WindowState.PAUSED, timeout=WAIT_MS)  # once mirrored back
    qtbot.mouseClick(window.parts.buttons.pause_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.state is WindowState.RUNNING, timeout=WAIT_MS)

    assert kill_agents(remote_store) >= 2  # the window's connection and the child's
    qtbot.waitUntil(lambda: label.text() == f"{HOST} · reconnecting…", timeout=WAIT_MS)
    with RunStore(tmp_path / "runs.sqlite3", readonly=True) as store:
        before = len(store.steps(launcher.run_id).losses)
    qtbot.waitUntil(lambda: label.text().endswith(" ms"), timeout=WAIT_MS)  # back by itself
    assert any("reconnecting" in line for line in window.parts.view.log.lines())
    assert any(line.endswith(f"reconnected to {HOST}") for line in window.parts.view.log.lines())

    def mirrored() -> int:
        with RunStore(tmp_path / "runs.sqlite3", readonly=True) as store:
            return len(store.steps(launcher.run_id).losses)

    qtbot.waitUntil(lambda: mirrored() > before + 5, timeout=WAIT_MS)  # the child reconnected and backfilled
    assert window.state is WindowState.RUNNING

    child = launcher.processes()
    with qtbot.waitSignal(window.run_ended, timeout=WAIT_MS) as ended:
        qtbot.mouseClick(
            window.parts.buttons.stop_button, Qt.MouseButton.LeftButton
        )  # SIGINT to the child, which forwards it
    assert ended.args == [WindowState.STOPPED], "\n".join(window.parts.view.log.lines())
    with RunStore(remote_store, readonly=True) as there, RunStore(tmp_path / "runs.sqlite3", readonly=True) as here:
        remote_row = there.run(there.find_uid(launcher.run_uid))
        remote_steps = there.steps(remote_row.id)
        local_steps = here.steps(launcher.run_id)
        assert remote_row.status == "stopped" and here.run(launcher.run_id).status == "stopped"
        assert here.run(launcher.run_id).host == remote_row.host
    assert len(remote_steps.losses) > before + 5
    assert list(local_steps.steps) == list(remote_steps.steps)  # every step, none lost across the drop
    assert list(local_steps.losses) == pytest.approx(list(remote_steps.losses))
    assert left_alive(child) == []
    assert "Traceback" not in "\n".join(window.parts.view.log.lines())


def test_a_machine_that_cannot_be_reached_is_one_line_in_the_window(qtbot, remote_window):
    window, _agent, _store = remote_window
    with qtbot.waitSignal(window.parts.connection.failed, timeout=WAIT_MS) as failed:
        window.parts.remote.connect_to(HOST, "no-such-gpu-train-monitor agent")
    problem = failed.args[0]
    assert "\n" not in problem and "Traceback" not in problem and problem
    assert window.parts.remote.label.text() == f"{HOST} · not connected"
    errors = [line for line in window.parts.view.log.lines() if "ERROR" in line]
    assert len(errors) == 1 and problem in errors[0]
    assert window.parts.form.remote_host() is None and window.parts.buttons.start_button.isEnabled()


def test_a_script_watched_while_connected_runs_there_and_is_mirrored_here(qtbot, remote_window, tmp_path):
    window, agent, remote_store = remote_window
    script = tmp_path / "there" / "train.py"  # a path of that machine (the same one, in this test)
    script.parent.mkdir()
    script.write_text(TRAIN_SCRIPT, encoding="utf-8")
    with qtbot.waitSignal(window.parts.connection.connected, timeout=WAIT_MS):
        window.parts.remote.connect_to(HOST, agent)
    window.parts.menus.open_watch_dialog()
    dialog = window.parts.menus.watch_dialog
    qtbot.addWidget(dialog)
    assert dialog.windowTitle() == f"Watch a script on {HOST}" and not dialog.script_button.isVisible()
    dialog.script_edit.setText(str(script))
    dialog.arguments_edit.setText("--steps 40 --sleep 0.02")
    dialog.folder_edit.setText(str(script.parent))
    assert dialog.command_label.text() == f"Runs python {script} --steps 40 --sleep 0.02 on {HOST} in {script.parent}"
    with qtbot.waitSignal(window.run_ended, timeout=WAIT_MS * 2) as ended:
        dialog.watch_button.click()
        assert dialog.problem == "", dialog.problem
        launcher = window.controller.launcher
        assert launcher.machine is not None and f"--remote={HOST}" in launcher.process.args
    assert ended.args == [WindowState.FINISHED], "\n".join(window.parts.view.log.lines())
    with RunStore(remote_store, readonly=True) as there, RunStore(tmp_path / "runs.sqlite3", readonly=True) as here:
        remote_row = there.run(there.find_uid(launcher.run_uid))
        local_row = here.run(launcher.run_id)
        assert remote_row.steps == local_row.steps == 40 and local_row.status == "completed"
        assert list(here.steps(local_row.id).losses) == pytest.approx(list(there.steps(remote_row.id).losses))
    assert any(f"watching {script} on {HOST}" in line for line in window.parts.view.log.lines())


def test_closing_the_window_mid_run_stops_the_run_there_and_leaves_no_local_process(qtbot, remote_window, tmp_path):
    window, agent, remote_store = remote_window
    with qtbot.waitSignal(window.parts.connection.connected, timeout=WAIT_MS):
        window.parts.remote.connect_to(HOST, agent)
    combo = window.parts.form.widgets["device"]
    combo.setCurrentIndex(combo.findData(f"cpu@{HOST}"))
    qtbot.mouseClick(window.parts.buttons.start_button, Qt.MouseButton.LeftButton)
    launcher = window.controller.launcher
    qtbot.waitUntil(lambda: launcher.run_id is not None, timeout=WAIT_MS)
    uid, child = launcher.run_uid, launcher.processes()
    shown: list[str | None] = []
    QTimer.singleShot(  # at the first turn of the closing's own event loop: a stop there can take under 300 ms
        0,
        lambda: shown.append(
            window.parts.launched.closing_dialog.labelText()
            if window.parts.launched.closing_dialog is not None
            else None
        ),
    )
    window.close()
    assert not window.isVisible() and shown == ["Stopping the run…"]
    assert left_alive(child) == []
    with RunStore(remote_store, readonly=True) as there:
        assert there.run(there.find_uid(uid)).status == "stopped"  # told to stop through the child, and did
