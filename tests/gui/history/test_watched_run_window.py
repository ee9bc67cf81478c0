"""A watched run (a user's own loop under `gpu_train_monitor.watch`) opened from the Runs tab reads true: its losses,
memory and breakdown as recorded; its steps without a total it never had, no epoch, no time left, no validation plot;
its header names who trained it, not a dataset, batch or placement of ours; the Runs table gives its steps
alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from gpu_train_monitor.gui.history.feed import StoreLink
from gpu_train_monitor.gui.history.row_text import steps_text
from gpu_train_monitor.gui.history.run_window import StoredRunView
from gpu_train_monitor.store.run_store import RunStore
from gpu_train_monitor.watch.session import Watch

STEPS = 40


@pytest.fixture(scope="module")
def watched(tmp_path_factory) -> tuple[Path, int, list[float]]:
    """A plain loop of 40 steps recorded with the watch API (CPU, in this process), and its losses."""
    path = tmp_path_factory.mktemp("watched") / "runs.sqlite3"
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    losses = []
    with Watch(model, optimizer, name="own-loop", runs_db=path, signals=False, report_interval_s=0.0) as watch:
        for _ in range(STEPS):
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            watch.step(loss, samples=len(x))
            losses.append(loss.item())
    with RunStore(path, readonly=True) as store:
        run_id = store.find_uid(watch.run_uid)
    assert run_id is not None
    return path, run_id, losses


def test_a_recorded_watched_run_shows_its_losses_memory_and_breakdown_and_only_what_it_knows(qtbot, watched):
    path, run_id, losses = watched
    link = StoreLink(path)
    view = StoredRunView(link, run_id)
    qtbot.addWidget(view)
    view.show()
    try:
        qtbot.waitUntil(lambda: not view.loading, timeout=10_000)
        view.draw_now()
        assert np.allclose(view.loss_plot.data.column(1), losses, rtol=1e-6)
        assert len(view.memory_plot.data) > 0 and view.breakdown_view.last is not None
        assert view.stats.values["step"].text() == str(STEPS)  # not "40 / 0"
        assert view.stats.values["epoch"].text() == "–" and view.stats.values["eta"].text() == "–"
        assert view.stats.progress.text() == "no total"
        assert view.loss_plot.val_plot.isHidden()  # a user's loop has no validation of ours
        header = view.header.text()
        assert "Sequential, trained by its own loop (the watch API)" in header and "placement" not in header
        log = view.log.toPlainText()
        assert "watching Sequential on cpu" in log and "its number of steps not known in advance" in log
        with RunStore(path, readonly=True) as store:
            assert steps_text(store.run(run_id)) == str(STEPS)  # the Runs table's Steps column
    finally:
        view.close()
        link.close()


def test_a_recorded_watched_run_shows_its_first_step_predicted_beside_the_measured_one(qtbot, watched):
    path, run_id, _ = watched
    link = StoreLink(path)
    view = StoredRunView(link, run_id)
    qtbot.addWidget(view)
    view.show()
    try:
        qtbot.waitUntil(lambda: not view.loading and view.breakdown_view.last is not None, timeout=10_000)
        predicted = view.breakdown_view.predicted
        assert predicted.prediction is not None and predicted.prediction.step == 1  # predicted in the loop's process
        assert not predicted.isHidden() and not predicted.task.busy  # nothing predicted again in the window
        params = view.breakdown_view.value_labels["params_bytes"].text()
        assert " · predicted " in params
        assert params.split(" · predicted ")[1] == params.split("\u00a0(")[0]  # the same weights, as many bytes
        assert predicted.line.text().startswith("Predicted step ") and "% off" in predicted.line.text()
        assert "in the training process, at step 1" in predicted.line.toolTip()
    finally:
        view.close()
        link.close()


def test_a_recorded_watched_run_that_ran_out_of_memory_shows_what_held_it(qtbot, tmp_path, monkeypatch):
    import gpu_train_monitor.watch.step_prediction

    monkeypatch.setattr(gpu_train_monitor.watch.step_prediction, "WAIT_AT_OOM_S", 120.0)  # however slow the trace
    path = tmp_path / "runs.sqlite3"
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    with pytest.raises(torch.OutOfMemoryError):
        with Watch(model, optimizer, runs_db=path, signals=False, report_interval_s=0.0) as watch:
            for step in range(1, 10):
                loss = torch.nn.functional.mse_loss(model(x), y)
                if step == 4:
                    raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB.")
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                watch.step(loss, samples=len(x))
    with RunStore(path, readonly=True) as store:
        run_id = store.find_uid(watch.run_uid)
    link = StoreLink(path)
    view = StoredRunView(link, run_id)
    qtbot.addWidget(view)
    view.show()
    try:
        qtbot.waitUntil(lambda: not view.loading, timeout=10_000)
        lines = [line.split("  ", 1)[1] for line in view.log.toPlainText().splitlines()]
        at = next(
            i for i, line in enumerate(lines) if line.startswith("ERROR: out of memory at step 4 with batch size 32")
        )
        assert lines[at + 1].startswith("largest holders by module (predicted for batch 32): 1 ")  # the ReLU saves most
        assert lines[at + 1].count("%)") == 3  # the Sequential's three layers, each with its share
        assert lines[at + 2].endswith("is predicted to fit")
    finally:
        view.close()
        link.close()
