"""A watched model and optimizer pickle and deep-copy as they do unwatched: the hooks the watch puts on them are
left out of their state, and a hook that reaches pickle anyway is a no-op of the standard library."""

from __future__ import annotations

import copy
import io
import pickle
from pathlib import Path

import pytest
import torch
from torch import nn

from gpu_train_monitor.watch.model_hooks import ModelHook, forward_hook
from gpu_train_monitor.watch.script import ScriptWatch


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    db = tmp_path / "runs.db"
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUNS_DB", str(db))
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUN_UID", "copied-uid")
    return db


def hooks_of(module: nn.Module) -> list[object]:
    return [*module._forward_hooks.values(), *module._forward_pre_hooks.values()]


def test_a_watched_model_and_optimizer_pickle_and_deep_copy(store: Path) -> None:
    script = ScriptWatch.from_environment().install()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    try:
        for _ in range(2):
            model(torch.randn(5, 3)).pow(2).mean().backward()
            optimizer.step()
            optimizer.zero_grad()
        assert script.watch is not None and script.watch.recorder is not None  # a live SQLite connection
        assert any(isinstance(hook, ModelHook) for hook in hooks_of(model))  # the model is watched
        copied = copy.deepcopy(model)
        loaded = pickle.loads(pickle.dumps(model))
        buffer = io.BytesIO()
        torch.save({"model": model, "optimizer": optimizer}, buffer)
        copy.deepcopy(optimizer)
        pickle.dumps(optimizer)
        assert hooks_of(copied) == [] and hooks_of(loaded) == []  # a copy is not watched
        assert any(isinstance(hook, ModelHook) for hook in hooks_of(model))  # the model still is
        x = torch.randn(2, 3)
        assert torch.equal(copied(x), model(x)) and torch.equal(loaded(x), model(x))
    finally:
        script.uninstall()
    assert script.finish(None) == "completed"


class OwnState(nn.Linear):
    def __getstate__(self) -> dict:  # a class that pickles its __dict__ itself, not through torch's
        return dict(self.__dict__)


def test_a_hook_that_reaches_pickle_anyway_is_a_no_op_of_the_standard_library() -> None:
    seen = []
    module = OwnState(2, 2)
    forward_hook(module, lambda *args: seen.append(args))
    module(torch.randn(1, 2))
    assert len(seen) == 1
    data = pickle.dumps(module)
    assert b"gpu_train_monitor" not in data.replace(b"gpu_train_monitor.watch.dropped_hook", b"")
    loaded = pickle.loads(data)
    loaded(torch.randn(1, 2))  # the no-op hook: nothing recorded, nothing raised
    copy.deepcopy(module)(torch.randn(1, 2))
    assert len(seen) == 1
