"""`with watch(model, optimizer) as w:` in a loop of the user's own: where its steps spend their time, from hooks on
the model and optimizer it was given, in its reports and its run's summary, with the verdict; the hooks leave the
user's objects as they were (saved, copied, and after the watch)."""

from __future__ import annotations

import copy
import io
import time
from pathlib import Path

import pytest
import torch
from torch import nn

from gpu_train_monitor.store.run_store import RunStore
from gpu_train_monitor.watch.session import Watch


def model_and_optimizer() -> tuple[nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    return model, torch.optim.SGD(model.parameters(), lr=0.01)


def train(
    path: Path, steps: int, data_wait_s: float = 0.0, micro_batches: int = 1, evaluate: bool = False
) -> dict[str, object]:
    """A plain loop watched through the API; its run's summary."""
    model, optimizer = model_and_optimizer()
    with Watch(model, optimizer, runs_db=path, signals=False, report_interval_s=0.05, predict=False) as watch:
        for _ in range(steps):
            for _ in range(micro_batches):
                time.sleep(data_wait_s)  # a slow data loader: the step waits for its batch
                x, y = torch.randn(16, 32), torch.randint(0, 4, (16,))
                loss = nn.functional.cross_entropy(model(x), y) / micro_batches
                loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if evaluate:
                with torch.no_grad():
                    model(torch.randn(16, 32))  # not a training forward
            watch.step(loss, samples=16 * micro_batches)
    with RunStore(path, readonly=True) as store:
        (run,) = store.list_runs()
        return store.summary(run.id) or {}


def test_a_loop_that_waits_for_its_data_shows_its_phases_and_is_input_bound(tmp_path: Path) -> None:
    summary = train(tmp_path / "runs.db", steps=30, data_wait_s=0.02)
    phases = summary["step_phases_s"]
    assert isinstance(phases, dict)
    assert phases["data"] >= 0.02  # the sleep, before each forward
    assert phases["forward"] > 0 and phases["backward"] > 0 and phases["optimizer"] > 0
    timed = sum(seconds for name, seconds in phases.items() if name != "step")
    assert timed == pytest.approx(phases["step"], rel=0.05)  # the marks cover the whole step
    assert summary["verdict"] == "input-bound"


def test_a_loop_with_its_data_at_hand_is_compute_bound(tmp_path: Path) -> None:
    summary = train(tmp_path / "runs.db", steps=40)
    phases = summary["step_phases_s"]
    assert isinstance(phases, dict) and phases["backward"] > 0
    assert summary["verdict"] == "compute-bound"


def test_gradient_accumulation_counts_each_micro_batch_wait_as_data_and_an_evaluation_is_no_forward(
    tmp_path: Path,
) -> None:
    summary = train(tmp_path / "runs.db", steps=20, data_wait_s=0.01, micro_batches=3, evaluate=True)
    phases = summary["step_phases_s"]
    assert isinstance(phases, dict)
    assert phases["data"] >= 0.03  # three waits a step, each before its micro-batch's forward
    assert phases["backward"] < 0.01  # the waits are not counted as the backward before them
    timed = sum(seconds for name, seconds in phases.items() if name != "step")
    assert timed == pytest.approx(phases["step"], rel=0.05)


def test_the_hooks_leave_the_model_and_optimizer_as_they_were(tmp_path: Path) -> None:
    model, optimizer = model_and_optimizer()
    with Watch(model, optimizer, runs_db=tmp_path / "runs.db", signals=False, predict=False) as watch:
        for _ in range(2):
            loss = model(torch.randn(4, 32)).sum()
            loss.backward()
            optimizer.step()
            watch.step(loss, samples=4)
        hooked = [p for p in model.parameters() if p._post_accumulate_grad_hooks]
        # after a backward, the parameter whose gradient comes last only: the first layer's
        assert len(hooked) == 1 and any(hooked[0] is p for p in model[0].parameters())
        saved = io.BytesIO()
        torch.save(model, saved)  # a whole model saved mid-run: nothing of the watch goes with it
        torch.save(optimizer.state_dict(), io.BytesIO())
        twin = copy.deepcopy(model)  # an EMA copy is not watched
        copy.deepcopy(optimizer)
    saved.seek(0)
    loaded = torch.load(saved, weights_only=False)
    assert not loaded._forward_hooks and not loaded._forward_pre_hooks
    assert all(not getattr(p, "_post_accumulate_grad_hooks", None) for p in twin.parameters())
    # after the watch: no hook of ours is left on the user's objects
    assert not model._forward_hooks and not model._forward_pre_hooks
    assert all(not p._post_accumulate_grad_hooks for p in model.parameters())
    assert not optimizer._optimizer_step_pre_hooks and not optimizer._optimizer_step_post_hooks
