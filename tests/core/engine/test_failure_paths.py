"""Failure paths that used to end in silently wrong results: an out-of-memory error while a batch is
made, in the optimizer step with fp16's gradient scaler, or in validation; max_steps across epochs.

Each test failed before its fix (the generator-based batch sources ended the epoch after the error and
the run still said `completed`; the scaler applied gradients still multiplied by the loss scale; an
out-of-memory error in validation ended the run as `failed`; --max-steps stopped after one epoch).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import gpu_train_monitor.engine.recipe
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.data.preprocess import DevicePreprocess
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import EpochEnded, LogMessage, OutOfMemory, RunFinished, RunStarted, StepsReported
from gpu_train_monitor.model.step import TrainingStep

TRAIN = 512
BATCH = 32  # 16 steps per epoch
OOM_TEXT = (
    "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.19 GiB of which "
    "3.69 MiB is free. Including non-PyTorch memory, this process has 79.18 GiB memory in use. Of the "
    "allocated memory 78.12 GiB is allocated by PyTorch, and 512.00 MiB is reserved by PyTorch but "
    "unallocated."
)


def run(**overrides: object) -> tuple[RunFinished, list[object]]:
    events: list[object] = []
    config = RunConfig(
        **{
            "device": "cpu",
            "model": "tiny-cnn",
            "synthetic_samples": TRAIN,
            "batch_size": BATCH,
            "report_interval": 0.01,
            **overrides,
        }
    )  # type: ignore[arg-type]
    finished = TrainingSession(config, [events.append]).run()
    return finished, events


def of_type(events: list[object], kind: type) -> list:
    return [e for e in events if isinstance(e, kind)]


def fail_preprocessing_at(monkeypatch: pytest.MonkeyPatch, calls: set[int]) -> list[int]:
    """Make the training batches' input conversion raise CUDA's out-of-memory error on the given calls
    (1-based), as the conversion or the copy to the device would on a full GPU."""
    seen: list[int] = []
    original = DevicePreprocess.to_model_input

    def to_model_input(self: DevicePreprocess, images: torch.Tensor) -> torch.Tensor:
        seen.append(images.shape[0])
        if len(seen) in calls:
            raise torch.OutOfMemoryError(OOM_TEXT)
        return original(self, images)

    monkeypatch.setattr(DevicePreprocess, "to_model_input", to_model_input)
    return seen


# --- an out-of-memory error while the next batch is made -------------------------------------------


@pytest.mark.parametrize("placement", ["resident", "stream"])
def test_an_error_making_a_batch_is_retried_and_every_planned_step_trains(
    monkeypatch: pytest.MonkeyPatch, placement: str
) -> None:
    fail_preprocessing_at(monkeypatch, {3})
    finished, events = run(placement=placement, on_oom="shrink", epochs=1)
    ooms = of_type(events, OutOfMemory)
    assert [(e.step, e.batch_size, e.new_batch_size, e.phase) for e in ooms] == [(2, BATCH, BATCH // 2, "train")]
    assert finished.status == "completed", finished.message
    # 2 steps of 32, then the other 14 * 32 images as 28 steps of 16: the whole epoch, nothing skipped
    assert finished.step == 2 + 28 == of_type(events, StepsReported)[-1].total_steps
    assert finished.summary.samples == TRAIN and finished.summary.skipped_samples == 0


@pytest.mark.parametrize("placement", ["resident", "stream"])
def test_an_error_making_a_batch_stops_the_run_as_out_of_memory(
    monkeypatch: pytest.MonkeyPatch, placement: str
) -> None:
    fail_preprocessing_at(monkeypatch, {3})
    finished, events = run(placement=placement, on_oom="stop")
    assert finished.status == "oom" and finished.step == 2
    assert "try a smaller batch size" in finished.message


def test_the_resident_epochs_augmentation_failing_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    original = DevicePreprocess.augment_shuffled
    calls: list[int] = []

    def augment_shuffled(self: DevicePreprocess, images: torch.Tensor, out: torch.Tensor | None = None):
        calls.append(1)
        if len(calls) == 2:  # the second epoch's whole-set augmentation
            raise torch.OutOfMemoryError(OOM_TEXT)
        return original(self, images, out)

    monkeypatch.setattr(DevicePreprocess, "augment_shuffled", augment_shuffled)
    finished, events = run(placement="resident", on_oom="shrink", epochs=2)
    assert finished.status == "completed", finished.message
    assert len(calls) == 3 and len(of_type(events, EpochEnded)) == 2
    assert finished.step == 16 + 32  # epoch 2 at half the batch
    assert finished.summary.samples == 2 * TRAIN


# --- fp16's gradient scaler after a failed optimizer step --------------------------------------------


def test_a_failed_optimizer_step_does_not_leave_the_scaler_half_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """An enabled GradScaler (as fp16 uses) and an out-of-memory error inside optimizer.step() at step 5:
    the scaler kept that optimizer marked as unscaled, the next step skipped unscale_ and applied
    gradients multiplied by the loss scale (65536): the loss went from 2.1 to 237,944."""
    build = gpu_train_monitor.engine.recipe.build_trainer

    def build_trainer(
        config: RunConfig, device: torch.device, in_channels: int, classes: int, *image_size: tuple[int, int]
    ) -> TrainingStep:
        trainer = build(config, device, in_channels, classes, *image_size)
        trainer.scaler = torch.amp.GradScaler("cpu", init_scale=2.0**16, enabled=True)
        step, calls = trainer.optimizer.step, []

        def failing_step(*args: object, **kwargs: object) -> object:
            calls.append(1)
            if len(calls) == 5:
                raise torch.OutOfMemoryError(OOM_TEXT)
            return step(*args, **kwargs)

        trainer.optimizer.step = failing_step  # type: ignore[method-assign]
        return trainer

    monkeypatch.setattr(gpu_train_monitor.engine.recipe, "build_trainer", build_trainer)
    finished, events = run(on_oom="shrink", max_steps=12, lr=0.05)
    assert finished.status == "completed", finished.message
    losses = [loss for report in of_type(events, StepsReported) for loss in report.losses]
    assert len(losses) == 12
    assert max(losses) < 10, losses  # without the reset: tens of thousands


def test_a_loss_that_climbs_far_above_its_start_is_said() -> None:
    finished, events = run(lr=10.0, optimizer="sgd", momentum=0.99, max_steps=40, report_interval=0.01)
    warnings = [e.text for e in of_type(events, LogMessage) if e.level == "warning"]
    rose = (
        finished.summary.loss_last is not None
        and finished.summary.loss_first is not None
        and (finished.summary.loss_last > 3 * finished.summary.loss_first)
    )
    if finished.status == "completed" and rose:
        assert any("the loss rose from" in text for text in warnings)
    else:  # it diverged outright (NaN): that ends the run with its own status
        assert finished.status == "diverged" or any("the loss rose from" in text for text in warnings)


# --- an out-of-memory error in validation -------------------------------------------------------------


def fail_validation(monkeypatch: pytest.MonkeyPatch, when: callable) -> list[int]:
    """Validation batches for which `when(batch_size)` is true raise CUDA's out-of-memory error."""
    sizes: list[int] = []
    original = DevicePreprocess.__call__

    def call(self: DevicePreprocess, images: torch.Tensor, augment: bool) -> torch.Tensor:
        if not augment:
            sizes.append(images.shape[0])
            if when(images.shape[0]):
                raise torch.OutOfMemoryError(OOM_TEXT)
        return original(self, images, augment)

    monkeypatch.setattr(DevicePreprocess, "__call__", call)
    return sizes


@pytest.mark.parametrize("placement", ["resident", "stream"])
def test_out_of_memory_in_validation_stops_as_out_of_memory(monkeypatch: pytest.MonkeyPatch, placement: str) -> None:
    fail_validation(monkeypatch, lambda batch: True)
    finished, events = run(placement=placement, max_steps=4)
    ooms = of_type(events, OutOfMemory)
    assert finished.status == "oom", finished.message  # it was "failed" with a traceback's text
    assert [(e.phase, e.action) for e in ooms] == [("validation", "stop")]
    assert "during validation" in ooms[0].message and "during validation" in finished.message
    assert ooms[0].reserved_unallocated_bytes == 512 * 2**20  # from the allocator's message


def test_out_of_memory_in_validation_shrinks_the_validation_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = fail_validation(monkeypatch, lambda batch: batch > 8)
    finished, events = run(placement="resident", on_oom="shrink", max_steps=4)
    assert finished.status == "completed", finished.message
    assert [(e.phase, e.batch_size, e.new_batch_size) for e in of_type(events, OutOfMemory)] == [
        ("validation", 32, 16),
        ("validation", 16, 8),
    ]
    ended = of_type(events, EpochEnded)[-1]
    assert ended.val_accuracy is not None and 0.0 <= ended.val_accuracy <= 1.0
    assert max(sizes[-5:]) == 8
    assert finished.summary.batch_size == BATCH  # training kept its batch


# --- max_steps bounds the run on its own ---------------------------------------------------------------


# The same 16 steps per epoch as TRAIN / BATCH, with half the images (256 is the least): these tests count steps.
HALF = dict(synthetic_samples=TRAIN // 2, batch_size=BATCH // 2)


def test_max_steps_alone_trains_over_as_many_epochs_as_it_takes() -> None:
    finished, events = run(max_steps=40, **HALF)  # 16 steps per epoch
    assert (finished.status, finished.step) == ("completed", 40)
    assert [e.epoch for e in of_type(events, EpochEnded)] == [1, 2, 3]
    started = of_type(events, RunStarted)[0]
    assert started.total_steps == 40 and started.epochs is None


def test_with_epochs_and_max_steps_the_first_limit_wins() -> None:
    finished, _ = run(max_steps=40, epochs=2, **HALF)
    assert finished.step == 32
    finished, _ = run(max_steps=20, epochs=2, **HALF)
    assert finished.step == 20


def test_without_either_one_epoch_is_trained() -> None:
    finished, events = run(**HALF)
    assert finished.step == 16 and len(of_type(events, EpochEnded)) == 1


def test_the_runs_config_in_events_is_read_only() -> None:
    finished, events = run(max_steps=2)
    started = of_type(events, RunStarted)[0]
    with pytest.raises(TypeError):
        started.config["batch_size"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        finished.summary.config["lr"] = 1.0  # type: ignore[index]
    assert finished.summary.to_dict()["config"]["batch_size"] == BATCH


def test_a_config_error_found_by_the_run_names_its_field() -> None:
    finished, _ = run(batch_size=TRAIN + 1)
    assert finished.status == "failed" and finished.user_error and finished.error_field == "batch_size"


def test_entries_an_image_folder_leaves_out_reach_the_runs_log(tmp_path: Path) -> None:
    """A broken link among the images is left out, and the run's log says so (not only stderr)."""
    from PIL import Image

    for name in ("cat", "dog"):
        (tmp_path / name).mkdir()
        for i in range(8):
            Image.new("RGB", (32, 32), (40 * i, 100 if name == "cat" else 200, 0)).save(tmp_path / name / f"{i}.png")
    (tmp_path / "cat" / "gone.png").symlink_to(tmp_path / "nowhere.png")
    finished, events = run(dataset="imagefolder", data_dir=str(tmp_path), batch_size=4, max_steps=2)
    assert finished.status == "completed", finished.message
    notes = [e.text for e in of_type(events, LogMessage) if e.level == "warning"]
    assert any("left out 1 entry" in text and "gone.png" in text for text in notes), notes
