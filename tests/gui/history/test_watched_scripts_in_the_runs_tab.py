"""Watched scripts told apart: two runs of `watch -- python train.py` from two folders are both a "Sequential"
trained by "script"; the Runs table, a search and each run's own window name the script and its folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_train_monitor.gui.history.feed import StoreLink
from gpu_train_monitor.gui.history.run_window import StoredRunView
from gpu_train_monitor.store.run_store import RunStore
from tests.support.run_store_support import make_panel, table_texts
from tests.support.watched_loops import record_watched_loop


def record_script_run(path: Path, script: Path) -> int:
    """What `gpu-train-monitor watch -- python SCRIPT` records (gpu_train_monitor.watch.script: the script's path and
    arguments in the config), from a loop in this process."""
    config = {"script": str(script), "argv": ["--lr", "0.01"]}
    return record_watched_loop(path, 4, source="script", config=config)


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """The user's home for the test: the scripts' folders are under it."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_two_watched_scripts_are_told_apart_by_their_script_and_folder(qtbot, home, tmp_path):
    path = tmp_path / "runs.sqlite3"
    first = record_script_run(path, home / "vision" / "train.py")
    second = record_script_run(path, home / "speech" / "train.py")
    panel = make_panel(qtbot, path)
    try:
        runs = dict(zip(panel.proxy.visible_ids(), table_texts(panel, "run")))
        assert runs == {first: f"#{first} train.py (~/vision)", second: f"#{second} train.py (~/speech)"}
        assert table_texts(panel, "model") == ["Sequential", "Sequential"]  # what told them apart before: nothing
        panel.search.setText("speech")
        assert panel.proxy.visible_ids() == [second]
        view = panel.open_run(first)
        qtbot.waitUntil(lambda: not view.loading, timeout=10_000)
        assert view.windowTitle().startswith(f"#{first} train.py (~/vision): Sequential on cpu (")
        assert "train.py (~/vision)" in view.header.text()
    finally:
        panel.stop()


def test_a_named_watched_run_keeps_its_name_and_its_window_names_the_script_too(qtbot, home, tmp_path):
    path = tmp_path / "runs.sqlite3"
    run_id = record_script_run(path, home / "vision" / "train.py")
    with RunStore(path) as store:
        store.rename(run_id, "baseline")
    link = StoreLink(path)
    view = StoredRunView(link, run_id)
    qtbot.addWidget(view)
    try:
        qtbot.waitUntil(lambda: not view.loading, timeout=10_000)
        assert view.windowTitle().startswith(f"#{run_id} baseline — train.py (~/vision) (")
    finally:
        view.close()
        link.close()
