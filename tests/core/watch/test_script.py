"""ScriptWatch, what `watch --` installs in a script's process, driven in this one: the run opens at the first
optimizer step under the handed uid and name, a stop reaches the script as a plain KeyboardInterrupt (and stays
the run's ending when the script catches it), and a process that never steps records nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from torch import nn

from gpu_train_monitor.store.run_store import RunStore
from gpu_train_monitor.watch.placement import unwrapped_model
from gpu_train_monitor.watch.script import ScriptWatch


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The store and uid the watch command hands its child."""
    db = tmp_path / "runs.db"
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUNS_DB", str(db))
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUN_UID", "handed-uid")
    monkeypatch.setenv("GPU_TRAIN_MONITOR_WATCH_NAME", "from-env")
    return db


class Loop:
    """A plain loop, one optimizer step per call."""

    def __init__(self) -> None:
        torch.manual_seed(0)
        self.model = nn.Linear(3, 1)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def train(self, steps: int) -> None:
        for _ in range(steps):
            self.model(torch.randn(5, 3)).pow(2).mean().backward()
            self.optimizer.step()
            self.optimizer.zero_grad()


def test_the_run_opens_at_the_first_step_under_the_handed_uid_and_name(store: Path) -> None:
    script = ScriptWatch.from_environment().install()
    try:
        assert script.watch is None
        Loop().train(4)
        assert script.watch is not None
        assert "GPU_TRAIN_MONITOR_RUN_UID" not in os.environ  # a training process this one starts: a run of its own
    finally:
        script.uninstall()
    assert script.finish(None) == "completed" and script.finish(None) == "completed"
    with RunStore(store) as saved:
        run = saved.run(saved.find_uid("handed-uid"))
        assert (run.name, run.steps, run.model, run.dataset) == ("from-env", 4, "Linear", "script")


def test_a_stop_is_a_keyboard_interrupt_and_stays_the_ending_when_the_script_catches_it(store: Path) -> None:
    script = ScriptWatch.from_environment().install()
    loop = Loop()
    try:
        loop.train(1)
        assert script.watch is not None
        script.watch.controls.request_stop()  # the window's Stop, or Ctrl+C
        with pytest.raises(KeyboardInterrupt) as raised:
            loop.train(1)
        assert type(raised.value) is KeyboardInterrupt  # the very class Python exits by SIGINT for
    finally:
        script.uninstall()
    assert script.finish(None) == "stopped"  # the script caught it, then exited normally


def test_a_process_that_never_steps_records_nothing(store: Path) -> None:
    script = ScriptWatch.from_environment().install()
    script.uninstall()
    assert script.finish(None) is None
    assert not store.exists()


def test_the_run_is_named_after_the_model_inside_a_wrapper() -> None:
    model = nn.Linear(2, 2)
    assert unwrapped_model(nn.DataParallel(model)) is model
    assert unwrapped_model(torch.compile(model)) is model  # compiles nothing until it is called
    assert unwrapped_model(model) is model and unwrapped_model(None) is None
