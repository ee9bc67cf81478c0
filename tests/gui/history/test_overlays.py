"""Recorded runs laid over the live plots: one colour per run, a legend entry each, smoothed as the live
EMA line, memory against seconds since the run's start; taking one off removes its lines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from gpu_train_monitor.export.smoothing import EmaState, debiased_ema
from gpu_train_monitor.gui.history.table_model import OVERLAY_COLUMN
from gpu_train_monitor.store.run_store import RunStore
from tests.support.run_store_support import SHORT, copy_store, make_panel, record_run


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, list[int]]:
    path = tmp_path_factory.mktemp("overlays") / "runs.sqlite3"
    return path, [record_run(path, SHORT.replace(batch_size=batch)) for batch in (32, 16)]


@pytest.fixture
def panel(qtbot, recorded):
    panel = make_panel(qtbot, recorded[0])
    yield panel
    panel.stop()


def legend(plot) -> list[str]:
    return [label.text for _, label in plot.getPlotItem().legend.items]


def tick(panel, run_id: int) -> None:
    """Click the run's overlay box, as a user would (the model's check state)."""
    row = panel.proxy.visible_ids().index(run_id)
    index = panel.proxy.index(row, OVERLAY_COLUMN)
    checked = index.data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
    panel.proxy.setData(
        index, Qt.CheckState.Unchecked if checked else Qt.CheckState.Checked, Qt.ItemDataRole.CheckStateRole
    )


def test_two_overlaid_runs_get_a_curve_and_a_legend_entry_each_and_one_can_be_removed(panel, recorded, qtbot):
    _, ids = recorded
    loss_plot, memory_plot = panel.overlays.loss_plot, panel.overlays.memory_plot
    before_loss, before_memory = legend(loss_plot.plot), legend(memory_plot.plot)
    for run_id in ids:
        tick(panel, run_id)
    assert panel.overlays.ids() == ids  # at once, with their data read in the background
    qtbot.waitUntil(lambda: not panel.feeds.loaders, timeout=10_000)
    panel.overlays.refresh()  # drawn now, if its timer has not drawn it already
    assert not panel.overlays.refresh()  # nothing new: no redraw
    names = [f"#{run_id} tiny-cnn cpu" for run_id in ids]
    assert legend(loss_plot.plot) == before_loss + names
    assert legend(memory_plot.plot) == before_memory + [f"{name} RSS (peak dotted)" for name in names]
    first, second = (panel.overlays.overlays[run_id] for run_id in ids)
    assert first.colour != second.colour
    with RunStore(recorded[0]) as store:
        series, reports, row = store.steps(ids[0]), store.reports(ids[0]), store.run(ids[0])
    x, y = first.loss_curve.getData()  # the smoothed loss, at the live plot's smoothing
    assert list(x) == list(series.steps)
    assert np.allclose(y, debiased_ema(np.array(series.losses), loss_plot.smoothing.value(), EmaState()))
    x, y = first.memory_curves[0].getData()  # allocated (RSS on the CPU) against seconds since the start
    assert np.allclose(x, [r.at - row.started_at for r in reports])
    assert list(y) == [r.allocated_bytes for r in reports]
    assert "2 overlaid" in panel.info.text()

    tick(panel, ids[0])  # unticked: its lines and legend entries go
    assert panel.overlays.ids() == [ids[1]]
    assert legend(loss_plot.plot) == before_loss + names[1:]
    assert first.loss_curve not in loss_plot.plot.getPlotItem().items
    assert all(curve not in memory_plot.plot.getPlotItem().items for curve in first.memory_curves)
    panel.clear_overlays()
    assert legend(loss_plot.plot) == before_loss and legend(memory_plot.plot) == before_memory
    assert not panel.model.overlaid


def test_overlays_follow_the_live_plots_smoothing_and_survive_a_new_live_run(panel, recorded, qtbot):
    _, ids = recorded
    panel.set_overlay(ids[1], True)
    qtbot.waitUntil(lambda: not panel.feeds.loaders, timeout=10_000)
    loss_plot = panel.overlays.loss_plot
    loss_plot.smoothing.setValue(0.0)  # no smoothing: the overlay is the raw loss
    panel.overlays.refresh()
    with RunStore(recorded[0]) as store:
        losses = store.steps(ids[1]).losses
    _, y = panel.overlays.overlays[ids[1]].loss_curve.getData()
    assert np.allclose(y, losses)
    loss_plot.clear()  # a new live run starts: the overlay stays
    panel.overlays.memory_plot.clear()
    assert panel.overlays.ids() == [ids[1]] and legend(loss_plot.plot)[-1] == f"#{ids[1]} tiny-cnn cpu"


def test_an_overlaid_run_deleted_elsewhere_leaves_the_plots(qtbot, recorded, tmp_path):
    path = copy_store(recorded[0], tmp_path / "runs.sqlite3")
    panel = make_panel(qtbot, path)
    try:
        run_id = recorded[1][0]
        panel.set_overlay(run_id, True)
        qtbot.waitUntil(lambda: not panel.feeds.loaders, timeout=10_000)
        with RunStore(path) as store:  # as `gpu-train-monitor runs delete` in a terminal would
            store.delete(run_id)
        panel.refresh()
        assert panel.overlays.ids() == [] and f"#{run_id} tiny-cnn cpu" not in legend(panel.overlays.loss_plot.plot)
    finally:
        panel.stop()
