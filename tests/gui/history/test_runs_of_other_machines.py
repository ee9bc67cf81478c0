"""Runs of other machines (copied into this store by a remote run's mirror: `runs.origin` names the machine as the
user reached it, `runs.host` is its host name): a Host column says where each run trained, a search finds a machine's
runs by either name, a run's window names the machine in its title, and while the connection to that machine is down
and reconnecting, the run's window says so instead of calling the run ended for want of news."""

from __future__ import annotations

import socket
import sqlite3
import time
from pathlib import Path

import pytest

from gpu_train_monitor.gui.history.feed import StoreLink
from gpu_train_monitor.gui.history.run_window import StoredRunView
from gpu_train_monitor.gui.history.table_model import KEYS
from tests.support.run_store_support import copy_store, make_panel, record_run, table_texts


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, list[int]]:
    path = tmp_path_factory.mktemp("machines") / "runs.sqlite3"
    return path, [record_run(path), record_run(path)]


@pytest.fixture
def store_path(recorded, tmp_path) -> Path:
    """A copy of the store whose second run was copied from gpu-box (host name node7)."""
    path = copy_store(recorded[0], tmp_path / "runs.sqlite3")
    set_run(path, recorded[1][1], origin="gpu-box", host="node7")
    return path


def set_run(path: Path, run_id: int, **values: object) -> None:
    db = sqlite3.connect(path)
    with db:
        for column, value in values.items():
            db.execute(f"UPDATE runs SET {column} = ? WHERE id = ?", (value, run_id))
    db.close()


def test_the_host_column_says_where_each_run_trained_and_a_search_finds_them(qtbot, store_path, recorded):
    here, copied = recorded[1]
    only_here = make_panel(qtbot, recorded[0])  # every run of this machine: the column would say so on each row
    try:
        assert only_here.table.isColumnHidden(KEYS.index("host"))
    finally:
        only_here.stop()
    panel = make_panel(qtbot, store_path)
    try:
        assert not panel.table.isColumnHidden(KEYS.index("host"))
        hosts = dict(zip(panel.proxy.visible_ids(), table_texts(panel, "host")))
        assert hosts == {here: socket.gethostname(), copied: "gpu-box (node7)"}
        devices = dict(zip(panel.proxy.visible_ids(), table_texts(panel, "device")))
        assert devices[copied] == "cpu"  # the machine is the Host column's: not said twice
        for search in ("gpu-box", "node7", "GPU-BOX cpu"):
            panel.search.setText(search)
            assert panel.proxy.visible_ids() == [copied], search
        panel.search.setText(socket.gethostname())
        assert here in panel.proxy.visible_ids() and copied not in panel.proxy.visible_ids()
    finally:
        panel.stop()


def test_a_copied_runs_window_names_its_machine(qtbot, store_path, recorded):
    copied = recorded[1][1]
    link = StoreLink(store_path)
    view = StoredRunView(link, copied)
    qtbot.addWidget(view)
    try:
        qtbot.waitUntil(lambda: not view.loading, timeout=10_000)
        assert "gpu-box (node7)" in view.windowTitle()
        assert "on gpu-box (node7)" in view.header.text()
    finally:
        view.close()
        link.close()


def test_a_copied_live_runs_window_says_reconnecting_while_the_connection_is_down(qtbot, store_path, recorded):
    copied = recorded[1][1]
    set_run(store_path, copied, status="running", finished_at=None, heartbeat_at=time.time())  # live on node7
    panel = make_panel(qtbot, store_path)
    try:
        view = panel.open_run(copied)
        qtbot.waitUntil(lambda: not view.loading, timeout=10_000)
        assert view.row is not None and view.row.live
        panel.connection_dropped("gpu-box")  # the window's connection to that machine dropped
        for shown in (view.windowTitle(), view.header.text(), view.stats.state_label.text()):
            assert "reconnecting to gpu-box" in shown, shown
        # no news for a minute: this store marks the copy interrupted (its heartbeat went stale)
        set_run(store_path, copied, status="interrupted", finished_at=time.time(), message="no heartbeat")
        view.poll()
        assert "reconnecting to gpu-box" in view.windowTitle() and view.following
        assert not any("interrupted" in line for line in view.log.lines())  # not taken for the run's end
        panel.connection_dropped(None)  # back: the mirror writes the run as it is there
        set_run(store_path, copied, status="running", finished_at=None, heartbeat_at=time.time(), message="")
        view.poll()
        assert "reconnecting" not in view.windowTitle() and "(live)" in view.windowTitle()
        assert view.following
    finally:
        panel.stop()


def test_the_window_tells_the_runs_windows_when_its_connection_drops(
    make_window, qtbot, store_path, recorded, monkeypatch
):
    copied = recorded[1][1]
    set_run(store_path, copied, status="running", finished_at=None, heartbeat_at=time.time())
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUNS_DB", str(store_path))
    window = make_window()
    view = window.parts.history.open_run(copied)
    qtbot.waitUntil(lambda: not view.loading, timeout=10_000)
    window.parts.connection.host = "gpu-box"  # as File ▸ Connect to a machine… left it
    window.parts.connection.state_changed.emit("reconnecting")
    assert "reconnecting to gpu-box" in view.windowTitle()
    window.parts.connection.state_changed.emit("connected")
    assert "reconnecting" not in view.windowTitle()
