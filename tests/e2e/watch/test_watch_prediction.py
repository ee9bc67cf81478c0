"""`gpu-train-monitor watch -- python train.py`: the script's first step is predicted in its own process, on its
model and the inputs its forward received, and recorded beside its measured breakdowns; nothing of it reaches the
script's output or its steps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpu_train_monitor.store.run_store import RunStore
from tests.e2e.watch.test_watch_command import TRAIN, printed_losses, watch
from tests.support.processes import WAIT_S


def test_a_watched_scripts_first_step_is_predicted_in_its_process(tmp_path: Path) -> None:
    folder = tmp_path / "research"
    folder.mkdir()
    (folder / "train.py").write_text(TRAIN)
    db = tmp_path / "runs.db"
    process = watch(folder, db, "python", "train.py", "--steps", "3")
    stdout, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 0, stderr
    assert stderr == "to stderr, untouched\n"  # the prediction says nothing in the script's output
    assert re.fullmatch(r"pid \d+\n(step \d loss \S+\n){3}", stdout)
    with RunStore(db) as store:
        (run,) = store.list_runs()
        losses = store.steps(run.id).losses
        events = store.events(run.id)
    assert (run.status, run.steps) == ("completed", 3)  # the trace is no step of the run
    assert losses == pytest.approx(printed_losses(stdout), rel=1e-6)
    (predicted,) = [event.data for event in events if event.kind == "StepPredicted"]
    params = (4 * 8 + 8 + 8 * 1 + 1) * 4
    assert predicted["reason"] == "" and predicted["step"] == 1
    assert predicted["batch_size"] == 3  # a micro-batch: the forward's own inputs
    assert predicted["params_bytes"] == params and predicted["optimizer_bytes"] == 0  # plain SGD keeps no state
    assert predicted["peak_bytes"] >= params + predicted["batch_bytes"] and predicted["batch_bytes"] == 3 * 4 * 4
    assert "Sequential at batch 3 (no autocast, SGD) on cpu" in predicted["what"]
