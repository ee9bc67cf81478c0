"""`gpu-train-monitor watch -- python train.py`: where a watched script's steps spend their time, from the hooks the
watch already has (the model's forward, backward(), the optimizer's step), in its reports and its run's summary,
with the verdict: a script that waits for its data is told so."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_train_monitor.store.run_store import RunStore
from tests.support.watched_loops import run_watched

SLOW_DATA = """
import time, torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(30):
    time.sleep(0.02)  # a slow data loader: the step waits for its batch
    x, y = torch.randn(16, 32), torch.randint(0, 4, (16,))
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
"""


def test_a_watched_script_that_waits_for_its_data_shows_its_phases_and_is_input_bound(tmp_path: Path) -> None:
    ended = run_watched(tmp_path, SLOW_DATA)
    assert ended.returncode == 0, ended.stderr
    with RunStore(ended.db) as store:
        (run,) = store.list_runs()
        summary = store.summary(run.id)
    assert summary is not None and summary["steps"] == 30
    phases = summary["step_phases_s"]
    assert phases["data"] >= 0.02  # the sleep, before each forward
    timed = sum(seconds for name, seconds in phases.items() if name != "step")
    assert timed == pytest.approx(phases["step"], rel=0.05)  # the marks cover the whole step
    assert summary["verdict"] == "input-bound" and "waits for its data" in summary["verdict_text"]
