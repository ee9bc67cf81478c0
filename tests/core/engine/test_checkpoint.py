"""Checkpoints: a resumed run continues the same run and trains the losses an uninterrupted one would; a file
that is damaged, foreign or carries code is refused with one clear sentence, and its code never runs."""

from __future__ import annotations

import builtins
import functools
import pickle
from pathlib import Path
from typing import Any

import pytest
import torch

from gpu_train_monitor.base.errors import ConfigError, UserError
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine import checkpoint_files as checkpoint
from gpu_train_monitor.engine.checkpoint_files import (
    CheckpointInfo,
    CheckpointPolicy,
    check_resumable,
    read_config,
    read_info,
    resume_config,
)
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import (
    CheckpointSaved,
    EpochEnded,
    EpochStarted,
    Event,
    LogMessage,
    RunFinished,
    RunStarted,
    StepsReported,
)

TRAIN, BATCH = 256, 32
STEPS_PER_EPOCH = TRAIN // BATCH  # 8
FAST = dict(device="cpu", model="tiny-cnn", synthetic_samples=TRAIN, batch_size=BATCH, report_interval=0.01, epochs=2)


def of_type(events: list[Event], kind: type) -> list:
    return [event for event in events if isinstance(event, kind)]


def all_losses(events: list[Event]) -> list[float]:
    return [loss for report in of_type(events, StepsReported) for loss in report.losses]


def train(config: RunConfig, observers: tuple = (), **options: Any) -> tuple[TrainingSession, list[Event]]:
    events: list[Event] = []
    session = TrainingSession(config, [events.append, *observers], **options)
    session.run()
    return session, events


@functools.cache
def uninterrupted(placement: str) -> tuple[tuple[float, ...], tuple[float | None, ...]]:
    """The losses and epoch train losses of the whole 2-epoch run, never stopped."""
    _, events = train(RunConfig(**FAST, placement=placement))
    assert events[-1].status == "completed"
    return tuple(all_losses(events)), tuple(e.train_loss for e in of_type(events, EpochEnded))


def interrupted(placement: str, how: str, folder: Path) -> tuple[TrainingSession, CheckpointSaved]:
    """The same run cut short, with the checkpoint it saved last: at an epoch's end, where --max-steps ended it
    mid-epoch, on a request at a step boundary mid-epoch (then stopped), or on a stop mid-epoch; or the run
    whole, with its every-8-steps checkpoint after epoch 1's last step (before the epoch found its end)."""
    policy = CheckpointPolicy(directory=str(folder), keep=0)
    if how == "every":
        policy = CheckpointPolicy(directory=str(folder), keep=0, every_steps=STEPS_PER_EPOCH, epoch_end=False)
    config = RunConfig(**FAST, placement=placement)
    if how == "epoch":
        config = config.replace(max_steps=STEPS_PER_EPOCH)
    elif how == "end":
        config = config.replace(max_steps=STEPS_PER_EPOCH + 3)
    session_box: list[TrainingSession] = []

    def cut(event: Event) -> None:  # mid-epoch: a report at a step that is not an epoch's last
        if (
            how in ("request", "stop")
            and isinstance(event, StepsReported)
            and event.step >= 3
            and event.step % STEPS_PER_EPOCH
            and not session_box[0].stop_requested
        ):
            if how == "request":
                session_box[0].request_checkpoint()
            session_box[0].request_stop()

    events: list[Event] = []
    session = TrainingSession(config, [events.append, cut], checkpoints=policy)
    session_box.append(session)
    session.run()
    saved = of_type(events, CheckpointSaved)
    assert saved and saved[-1].reason == how
    return session, saved[0] if how == "every" else saved[-1]


@pytest.mark.parametrize("placement", ["stream", "resident"])
@pytest.mark.parametrize("how", ["epoch", "end", "request", "stop", "every"])
def test_a_resumed_run_continues_its_steps_and_trains_the_losses_of_an_uninterrupted_run(
    placement: str, how: str, tmp_path: Path
) -> None:
    losses, epoch_losses = uninterrupted(placement)
    first, saved = interrupted(placement, how, tmp_path)
    at = saved.step
    complete = read_info(saved.path).epoch_complete
    assert complete == (how == "epoch")  # the others are mid-epoch (every: at its last batch, not yet ended)
    assert (at % STEPS_PER_EPOCH == 0) == (how in ("epoch", "every"))

    resumed, events = train(RunConfig(**FAST, placement=placement), resume=saved.path)
    started = of_type(events, RunStarted)[0]
    assert resumed.run_uid == first.run_uid == started.run_uid  # the same run, in the run store too
    assert (started.start_step, started.total_steps) == (at, 2 * STEPS_PER_EPOCH)
    reports = of_type(events, StepsReported)
    assert reports[0].first_step == at + 1 and reports[-1].step == 2 * STEPS_PER_EPOCH
    assert reports[-1].samples == 2 * TRAIN  # images counted from the run's start
    assert tuple(all_losses(events)) == losses[at:]  # bit-exact on the CPU: same batches, same augmentation
    ended = of_type(events, EpochEnded)
    assert [e.epoch for e in ended] == ([2] if complete or at > STEPS_PER_EPOCH else [1, 2])
    assert [e.train_loss for e in ended] == list(epoch_losses[-len(ended) :])  # whole-epoch means, as uninterrupted
    assert [e.epoch for e in of_type(events, EpochStarted)] == ([] if at > STEPS_PER_EPOCH else [2])
    finished = events[-1]
    assert (finished.status, finished.step) == ("completed", 2 * STEPS_PER_EPOCH)
    assert (finished.summary.steps, finished.summary.start_step) == (2 * STEPS_PER_EPOCH, at)  # trained the rest
    assert any(f"resumed from {saved.path}: step {at}" in e.text for e in of_type(events, LogMessage))


def test_adamw_and_an_extended_length_resume_exactly_too(tmp_path: Path) -> None:
    """AdamW's step counters and moments come back; a checkpoint at the end of a 1-epoch run trains on when
    given 2 epochs, as if the run had been planned that long."""
    config = RunConfig(**{**FAST, "epochs": 1}, optimizer="adamw", lr=1e-3)
    _, whole = train(config.replace(epochs=2))
    _, first = train(config, checkpoints=CheckpointPolicy(directory=str(tmp_path)))
    path = of_type(first, CheckpointSaved)[-1].path
    _, events = train(config.replace(epochs=2), resume=path)
    assert all_losses(events) == all_losses(whole)[STEPS_PER_EPOCH:]


# --- what a checkpoint holds, where it goes, and when -------------------------------------------------------


def test_a_checkpoint_holds_the_run_and_reads_back_as_plain_values(tmp_path: Path) -> None:
    session, events = train(RunConfig(**{**FAST, "epochs": 1}), checkpoints=CheckpointPolicy(directory=str(tmp_path)))
    saved = of_type(events, CheckpointSaved)[-1]
    assert (saved.step, saved.epoch, saved.reason) == (STEPS_PER_EPOCH, 1, "epoch")
    assert Path(saved.path) == tmp_path / session.run_uid / f"step-{STEPS_PER_EPOCH}.pt"
    assert saved.size_bytes == Path(saved.path).stat().st_size > 0
    info = read_info(saved.path)
    assert (info.run_uid, info.step, info.epoch, info.epoch_complete) == (session.run_uid, 8, 1, True)
    assert read_config(saved.path) == session.config == RunConfig(**{**FAST, "epochs": 1})
    assert not list(tmp_path.rglob("*.partial*"))  # the temporary file was renamed, not left behind


def test_default_folder_is_checkpoints_in_the_user_data_folder_unless_the_environment_says(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(checkpoint.ENV_DIR, str(tmp_path))
    assert CheckpointPolicy().folder("abc") == tmp_path / "abc"
    monkeypatch.delenv(checkpoint.ENV_DIR)
    assert checkpoint.default_dir().name == "checkpoints" and "gpu-train-monitor" in str(checkpoint.default_dir())
    assert CheckpointPolicy(directory=str(tmp_path / "mine")).folder("abc") == tmp_path / "mine" / "abc"


def test_every_n_steps_and_epoch_ends_are_saved_and_only_the_newest_automatic_ones_kept(tmp_path: Path) -> None:
    requested = tmp_path / "mine.pt"
    asked: list[bool] = []

    def ask(event: Event) -> None:
        if isinstance(event, StepsReported) and not asked:
            asked.append(True)
            session.request_checkpoint(str(requested))

    events: list[Event] = []
    policy = CheckpointPolicy(directory=str(tmp_path), every_steps=5, keep=2)
    session = TrainingSession(RunConfig(**{**FAST, "epochs": 3}), [events.append, ask], checkpoints=policy)
    assert session.run().status == "completed"
    saved = [(e.step, e.reason) for e in of_type(events, CheckpointSaved)]
    automatic = [s for s in saved if s[1] != "request"]
    assert automatic == [
        (5, "every"),
        (8, "epoch"),
        (10, "every"),
        (15, "every"),
        (16, "epoch"),
        (20, "every"),
        (24, "epoch"),
    ]
    assert [s[1] for s in saved].count("request") == 1
    kept = sorted(path.name for path in (tmp_path / session.run_uid).iterdir())
    assert kept == ["step-20.pt", "step-24.pt"]  # the newest two; older automatic ones were deleted
    assert requested.is_file()  # a requested checkpoint is never pruned


def test_without_a_policy_a_session_saves_only_what_is_requested(tmp_path: Path) -> None:
    _, events = train(RunConfig(**FAST))
    assert not of_type(events, CheckpointSaved)


def test_a_save_that_fails_is_a_warning_and_the_run_trains_on(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("in the way")
    _, events = train(RunConfig(**FAST), checkpoints=CheckpointPolicy(directory=str(not_a_folder)))
    warnings = [e.text for e in of_type(events, LogMessage) if "checkpoint" in e.text]
    assert len(warnings) == 2  # one per epoch's end
    assert all(text.startswith("checkpoint not saved at step") and "training goes on" in text for text in warnings)
    assert all(e.level == "warning" for e in of_type(events, LogMessage) if "checkpoint" in e.text)
    assert events[-1].status == "completed" and events[-1].step == 2 * STEPS_PER_EPOCH
    assert not of_type(events, CheckpointSaved)


# --- resuming: what may change ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def saved_mid_epoch(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A checkpoint of tiny-cnn on synthetic data, saved where --max-steps 5 ended its run (mid-epoch 1)."""
    folder = tmp_path_factory.mktemp("checkpoints")
    _, events = train(RunConfig(**FAST, max_steps=5), checkpoints=CheckpointPolicy(directory=str(folder)))
    return of_type(events, CheckpointSaved)[-1].path


@pytest.mark.parametrize(
    ("change", "field", "fragments"),
    [
        (
            {"model": "resnet18"},
            "model",
            ["a checkpoint of tiny-cnn trained on synthetic", "not resnet18 on synthetic"],
        ),
        ({"dataset": "mnist"}, "dataset", ["of tiny-cnn trained on synthetic", "not tiny-cnn on mnist"]),
        ({"batch_size": 16}, "batch_size", ["keeps its checkpoint's batch_size (32)", "16"]),
        ({"lr": 0.1}, "lr", ["keeps its checkpoint's lr (0.03)"]),
        ({"placement": "stream"}, "placement", ["saved mid-epoch with the resident placement"]),
    ],
)
def test_a_resume_that_would_train_something_else_is_refused_naming_both(
    saved_mid_epoch: str, change: dict, field: str, fragments: list[str]
) -> None:
    with pytest.raises(ConfigError) as caught:
        TrainingSession(RunConfig(**FAST).replace(**change), resume=saved_mid_epoch)
    assert caught.value.field == field
    for fragment in fragments:
        assert fragment in str(caught.value)


def test_how_a_run_trains_may_change_on_resume_and_auto_means_the_checkpoints_choice(saved_mid_epoch: str) -> None:
    session = TrainingSession(RunConfig(**FAST).replace(model="auto", report_interval=0.5), resume=saved_mid_epoch)
    assert session.config.model == "tiny-cnn"
    assert session.config.placement == "resident"  # mid-epoch: the placement its position is counted in
    assert session.config.report_interval == 0.5


def test_a_new_length_replaces_both_length_settings() -> None:
    config = RunConfig(**FAST).replace(epochs=None, max_steps=5)
    info = CheckpointInfo("x.pt", "uid", 5, 1, False, config, "stream", "cpu")
    assert resume_config(info, {}) == config
    assert (resume_config(info, {"epochs": 3}).epochs, resume_config(info, {"epochs": 3}).max_steps) == (3, None)
    assert resume_config(info, {"max_steps": 40}).max_steps == 40
    assert resume_config(info, {"device": "cpu", "workers": 2}).workers == 2
    assert check_resumable(config.replace(placement="stream"), info).placement == "stream"
    epoch_end = CheckpointInfo("x.pt", "uid", 8, 1, True, config, "resident", "cpu")
    assert check_resumable(config.replace(placement="stream"), epoch_end).placement == "stream"  # between epochs


def test_a_checkpoint_whose_run_is_complete_says_how_to_train_on(saved_mid_epoch: str) -> None:
    _, events = train(RunConfig(**FAST, max_steps=5), resume=saved_mid_epoch)
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.status == "failed" and finished.user_error
    assert "nothing to train" in finished.message and "--epochs or --max-steps" in finished.message


def test_data_of_another_shape_is_refused_at_the_start(saved_mid_epoch: str, tmp_path: Path) -> None:
    """An image folder may have changed since: the checkpoint's classes are checked against the data's."""
    payload = torch.load(saved_mid_epoch, weights_only=True)
    payload["data"]["classes"] = 5
    other = tmp_path / "five-classes.pt"
    torch.save(payload, other)
    _, events = train(RunConfig(**FAST), resume=str(other))
    finished = events[-1]
    assert finished.status == "failed" and finished.user_error
    assert "was trained on synthetic (5 classes" in finished.message and "(10 classes" in finished.message


# --- reading files safely ---------------------------------------------------------------------------------


class RunsCode:
    """Unpickling this calls exec(): what a malicious checkpoint does to whoever loads it unsafely."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return builtins.exec, (f"__import__('pathlib').Path({str(self.marker)!r}).write_text('the code ran')",)


@pytest.mark.parametrize("writer", ["torch.save", "pickle.dump"])
def test_a_checkpoint_that_carries_code_is_refused_and_its_code_never_runs(
    writer: str, tmp_path: Path, saved_mid_epoch: str
) -> None:
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.pt"
    if writer == "torch.save":  # a valid checkpoint in every other respect
        payload = torch.load(saved_mid_epoch, weights_only=True)
        payload["progress"] = RunsCode(marker)
        torch.save(payload, evil)
    else:  # a bare pickle, the format torch.load read before its zip files
        with open(evil, "wb") as file:
            pickle.dump({"format": checkpoint.FORMAT, "version": 1, "progress": RunsCode(marker)}, file, protocol=2)
    with pytest.raises(UserError) as caught:
        checkpoint.load(evil)
    message = str(caught.value)
    assert message.startswith(f"{evil} is not a checkpoint this app can load safely: it carries code")
    assert "(it would call exec)" in message or "(it would call builtins.exec)" in message
    assert message.endswith("nothing in it was run")
    assert not marker.exists()
    with pytest.raises(UserError, match="carries code"):
        TrainingSession(RunConfig(**FAST), resume=str(evil))
    assert not marker.exists()
    with open(evil, "rb") as file:  # the file is truly malicious: loaded unsafely, its code runs
        torch.load(file, weights_only=False) if writer == "torch.save" else pickle.load(file)
    assert marker.read_text() == "the code ran"


def test_damaged_missing_and_foreign_files_are_refused_with_one_sentence(saved_mid_epoch: str, tmp_path: Path) -> None:
    whole = Path(saved_mid_epoch).read_bytes()
    truncated, empty, noise = tmp_path / "cut.pt", tmp_path / "empty.pt", tmp_path / "noise.pt"
    truncated.write_bytes(whole[: len(whole) // 2])
    empty.write_bytes(b"")
    noise.write_bytes(bytes(range(256)) * 8)
    weights = tmp_path / "weights.pt"
    torch.save({"conv.weight": torch.zeros(2, 2)}, weights)
    newer = tmp_path / "newer.pt"
    payload = torch.load(saved_mid_epoch, weights_only=True)
    payload["version"] = checkpoint.VERSION + 1
    torch.save(payload, newer)
    expected = {
        truncated: f"{truncated} is damaged or not a checkpoint (it may be incomplete",
        empty: f"{empty} is damaged or not a checkpoint",
        noise: f"{noise} is damaged or not a checkpoint (its contents are not tensors and plain values",
        weights: f"{weights} is not a gpu-train-monitor checkpoint",
        newer: f"{newer} was saved by a newer gpu-train-monitor (checkpoint format {checkpoint.VERSION + 1})",
        tmp_path / "missing.pt": f"cannot read the checkpoint {tmp_path / 'missing.pt'}: No such file",
        tmp_path: f"cannot read the checkpoint {tmp_path}: Is a directory",
    }
    for path, start in expected.items():
        with pytest.raises(UserError) as caught:
            read_config(path)
        assert str(caught.value).startswith(start), (path, str(caught.value))
        assert "\n" not in str(caught.value)


def test_a_checkpoint_from_another_kind_of_device_resumes_with_a_warning(saved_mid_epoch: str, tmp_path: Path) -> None:
    """The device's random generators do not carry over (a CUDA state does not fit the CPU's): the run goes
    on from the same weights and step, and says its data order differs from here on."""
    payload = torch.load(saved_mid_epoch, weights_only=True)
    payload["device_type"] = "cuda"
    payload["rng"]["now"]["source"]["data"] = torch.zeros(16, dtype=torch.uint8)  # a CUDA generator's state
    payload["rng"]["epoch_start"]["source"]["data"] = torch.zeros(16, dtype=torch.uint8)
    other = tmp_path / "from-cuda.pt"
    torch.save(payload, other)
    _, events = train(RunConfig(**FAST), resume=str(other))
    assert events[-1].status == "completed" and of_type(events, RunStarted)[0].start_step == 5
    notes = [e.text for e in of_type(events, LogMessage) if e.level == "warning"]
    assert any("was saved on cuda" in text and "differ from an uninterrupted run's" in text for text in notes)


@pytest.mark.gpu
@pytest.mark.parametrize("placement", ["stream", "resident"])
@pytest.mark.parametrize("amp", ["off", "fp16"])
def test_a_cuda_run_resumed_mid_epoch_trains_the_losses_of_an_uninterrupted_one(
    placement: str, amp: str, tmp_path: Path
) -> None:
    """The CUDA generators (global and the data's), the fused optimizer and fp16's gradient scaler come back.
    cuDNN's backward kernels may sum in another order from run to run: equal within a small tolerance."""
    config = RunConfig(**{**FAST, "device": "cuda:0"}, placement=placement, amp=amp)
    _, whole = train(config)
    _, first = train(
        config.replace(max_steps=STEPS_PER_EPOCH + 3), checkpoints=CheckpointPolicy(directory=str(tmp_path))
    )
    saved = of_type(first, CheckpointSaved)[-1]
    assert (saved.step, saved.reason) == (STEPS_PER_EPOCH + 3, "end")
    assert read_info(saved.path).device_type == "cuda"
    _, events = train(config, resume=saved.path)
    assert events[-1].status == "completed", events[-1].message
    assert all_losses(events) == pytest.approx(all_losses(whole)[saved.step :], rel=1e-3, abs=1e-4)
    if amp == "off":  # and on the CPU: the same weights go on, the CUDA generators stay behind (with a warning)
        _, on_cpu = train(config.replace(device="cpu"), resume=saved.path)
        assert on_cpu[-1].status == "completed" and of_type(on_cpu, RunStarted)[0].start_step == saved.step
        assert any("was saved on cuda" in e.text for e in of_type(on_cpu, LogMessage))
