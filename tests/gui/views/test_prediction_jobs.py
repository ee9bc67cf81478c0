"""The window's prediction jobs share what they predicted: the what-if table and a text model's grid ask for some of
the same steps, each seconds long for a large model, and each is made once."""

from __future__ import annotations

import pytest

import gpu_train_monitor.engine.prediction
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.gui.views.prediction_jobs import RecentPredictions, fit_grid_job, what_if_job
from tests.support.predictions import ModelPredictions

GPT = RunConfig(device="cpu", model="gpt-tiny", dataset="synthetic-text", seq_len=64, batch_size=8)


def test_the_grid_reuses_the_steps_the_what_if_table_predicted(monkeypatch: pytest.MonkeyPatch) -> None:
    model = ModelPredictions()
    monkeypatch.setattr(gpu_train_monitor.engine.prediction, "predict", model)
    reports: list = []
    table = what_if_job(GPT, "cpu", 10**9, 1024)(reports.append, lambda: False)
    assert {"half_seq_len", "half_batch", "double_batch"} <= {row.change for row in table.rows}
    before = len(model.calls)
    grid = fit_grid_job(GPT, "cpu", 10**9)(reports.append, lambda: False)
    assert grid.complete and len(grid.cells) == 9
    made = model.calls[before:]
    # the table predicted 8 x 64, 4 x 64, 16 x 64 and 8 x 32: the grid made the other five
    assert sorted((config.seq_len, batch) for config, batch in made) == [
        (32, 4),
        (32, 16),
        (128, 4),
        (128, 8),
        (128, 16),
    ]
    fit_grid_job(GPT, "cpu", 10**9)(reports.append, lambda: False)
    assert len(model.calls) == before + 5  # asked again: nothing new to predict


def test_recent_predictions_keep_the_latest_only() -> None:
    recent = RecentPredictions(limit=2)
    for n in range(3):
        recent.put(("predict", n), n)
    assert [recent.get(("predict", n)) for n in range(3)] == [None, 1, 2]
