"""Runs built by `gpu_train_monitor.engine.recipe.build_run` from your own model and dataset (`module:factory`, modules
the test writes): both placements, the resident fit check, the session's user error and a comparison take them as
they take the built-in names (a finder trial, in its own process: tests/e2e/test_finder_trials.py)."""

from __future__ import annotations

import pytest
import torch

from gpu_train_monitor.base.errors import DatasetError
from gpu_train_monitor.compare.comparison import Comparison
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.recipe import build_run, generator_for
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import Event, LogMessage, RunStarted
from tests.support.user_code import importable_folder

OWN = dict(
    device="cpu", model="mymodels:small_net", dataset="mydata:blobs", batch_size=8, max_steps=4, report_interval=0.01
)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    yield from importable_folder(tmp_path, monkeypatch)


def run(**overrides: object) -> tuple[object, list[Event]]:
    events: list[Event] = []
    finished = TrainingSession(RunConfig(**{**OWN, **overrides}), [events.append]).run()
    return finished, events


@pytest.mark.parametrize("placement", ["resident", "stream", "auto"])
def test_your_own_model_trains_on_your_own_data_in_either_placement(folder, placement: str) -> None:
    finished, events = run(placement=placement)
    assert (finished.status, finished.message) == ("completed", "")
    started = next(event for event in events if isinstance(event, RunStarted))
    assert started.placement == ("resident" if placement == "auto" else placement)  # auto: it fits
    assert (started.train_samples, started.val_samples) == (86, 10)
    assert started.parameters == 3 * 4 * 9 + 4 + 4 * 3 + 3  # small_net for 3 channels and the 3 classes
    assert finished.summary.val_accuracy is not None
    said = [event.text for event in events if isinstance(event, LogMessage) and event.level == "info"]
    assert (
        "your own dataset: 86 training and 10 validation images of 3x8x8, 3 classes; each epoch crops them at "
        "random (up to 1 px) and flips them, and every batch is normalised per channel by the training "
        "images' mean and std"
    ) in said


def test_the_resident_fit_check_applies_to_your_own_dataset(folder) -> None:
    config = RunConfig(**OWN, placement="resident")
    with pytest.raises(
        DatasetError,
        match=r"^placement: the mydata:blobs dataset needs .* on cpu .* use the "
        r"stream placement \(--placement stream\)$",
    ):
        build_run(config, torch.device("cpu"), 10_000, generator_for(torch.device("cpu")))
    parts = build_run(config.replace(placement="auto"), torch.device("cpu"), 10_000, generator_for(torch.device("cpu")))
    assert parts.placement.name == "stream" and "does not fit in free device memory" in parts.placement.note


def test_a_mistake_in_your_own_code_ends_the_run_as_a_user_error_naming_it(folder) -> None:
    finished, _ = run(dataset="mydata:ragged")
    assert (finished.status, finished.user_error, finished.error_field) == ("failed", True, "dataset")
    assert finished.message == (
        "dataset: mydata:ragged: item 5 has an image of 3x6x6 but item 0's is 3x8x8: every "
        "image must have the same size"
    )
    finished, _ = run(model="mymodels:TenWay")  # 10 outputs for a 3-class dataset
    assert (finished.status, finished.user_error, finished.error_field) == ("failed", True, "model")
    assert finished.message.startswith(
        "model: mymodels:TenWay: the model gives 10 outputs per image but the dataset has 3 classes"
    )


def test_a_comparison_races_your_own_model_against_a_built_in_one(folder) -> None:
    base = RunConfig(**{**OWN, "max_steps": 3})
    result = Comparison(base, [{}, {"model": "tiny-cnn"}]).run()
    assert [outcome.status for outcome in result.runs] == ["completed", "completed"]


@pytest.mark.gpu
def test_your_own_dataset_is_resident_on_the_gpu_and_your_model_checked_there(folder) -> None:
    finished, events = run(device="cuda", placement="auto", channels_last=True)
    assert (finished.status, finished.message) == ("completed", "")
    started = next(event for event in events if isinstance(event, RunStarted))
    assert started.placement == "resident" and started.device.startswith("cuda")
    finished, _ = run(device="cuda", model="mymodels:for_28px")
    assert finished.user_error and "fails on the run's input, a batch shaped 2x3x8x8" in finished.message


EXITS_AND_LAZY = '''
import sys
from torch import nn


def lazy(num_classes):
    """nn.LazyLinear learns its input width at the first forward."""
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.LazyLinear(num_classes))


class ExitsInTraining(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.inner = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                   nn.Linear(4, num_classes))

    def forward(self, x):
        if self.training:  # the check before training passes; the first step exits
            sys.exit(5)
        return self.inner(x)


class ExitsAlways(ExitsInTraining):
    def forward(self, x):
        sys.exit(5)
'''


@pytest.mark.parametrize("channels_last", [False, True])
def test_a_model_with_lazy_modules_trains(folder, channels_last: bool) -> None:
    """The memory format was applied before the first forward: "uninitialized parameter", run failed."""
    (folder / "exits.py").write_text(EXITS_AND_LAZY, encoding="utf-8")
    finished, events = run(model="exits:lazy", channels_last=channels_last)
    assert (finished.status, finished.message) == ("completed", "")
    started = next(event for event in events if isinstance(event, RunStarted))
    assert started.parameters == 3 * 4 * 9 + 4 + 4 * 8 * 8 * 3 + 3  # the lazy layer's 256 inputs counted


def test_sys_exit_in_a_models_forward_fails_the_run_and_says_where(folder, tmp_path, capsys) -> None:
    """It ended the process with exit code 5 and no message, and the store kept the run as interrupted."""
    from gpu_train_monitor.cli.main import main
    from gpu_train_monitor.store.run_store import RunStore

    (folder / "exits.py").write_text(EXITS_AND_LAZY, encoding="utf-8")
    store = tmp_path / "runs.sqlite3"
    code = main(
        [
            "run",
            "--device",
            "cpu",
            "--model",
            "exits:ExitsInTraining",
            "--dataset",
            "mydata:blobs",
            "--batch-size",
            "8",
            "--max-steps",
            "2",
            "--runs-db",
            str(store),
        ]
    )
    err = capsys.readouterr().err
    in_training, always = (number for number, text in enumerate(EXITS_AND_LAZY.splitlines(), 1) if "exit(5)" in text)
    line = (
        f"your code called sys.exit(5) in forward (exits.py, line {in_training}); to end a run with an error, "
        "raise an exception"
    )
    assert code == 1 and f"gpu-train-monitor: failed: {line}\n" in err, err
    with RunStore(store) as runs:
        (recorded,) = runs.list_runs()
    assert (recorded.status, recorded.steps) == ("failed", 0)
    # where the check before training meets it, it is that check's one line about your model
    finished, _ = run(model="exits:ExitsAlways")
    assert finished.status == "failed" and finished.user_error
    assert finished.message.endswith(
        "fails on the run's input, a batch shaped 2x3x8x8 (batch x channels x height x "
        "width, from the dataset): it called sys.exit(5) in forward (exits.py, line "
        f"{always})"
    )
