"""Watched scripts told apart: two runs of `watch -- python train.py` from two folders are both a "Sequential"
trained by "script"; the Runs table, a search and each run's own window name the script and its folder."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gpu_train_monitor.gui.history.feed import StoreLink
from gpu_train_monitor.gui.history.run_window import StoredRunView
from gpu_train_monitor.store.run_store import RunStore
from gpu_train_monitor.watch.session import Watch
from tests.support.run_store_support import make_panel, table_texts


def record_script_run(path: Path, script: Path) -> int:
    """What `gpu-train-monitor watch -- python SCRIPT` records (gpu_train_monitor.watch.script: the script's path and
    arguments in the config), from a loop in this process."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    config = {"script": str(script), "argv": ["--lr", "0.01"]}
    with Watch(
        model,
        optimizer,
        runs_db=path,
        source="script",
        config=config,
        signals=False,
        report_interval_s=0.0,
        predict=False,
    ) as watch:
        for _ in range(4):
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            watch.step(loss, samples=len(x))
    with RunStore(path, readonly=True) as store:
        run_id = store.find_uid(watch.run_uid)
    assert run_id is not None
    return run_id


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
