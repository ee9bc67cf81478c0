"""One training run, as its observers (the CLI's progress bar, the GUI's plots) see it."""

from __future__ import annotations

import math
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from torch import nn

import gpu_train_monitor.engine.recipe
import gpu_train_monitor.engine.session
from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.data.datasets import synthetic_bytes
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import (
    CacheCleared,
    CheckpointSaved,
    EpochEnded,
    EpochStarted,
    Event,
    LogMessage,
    OutOfMemory,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    StepsReported,
)
from gpu_train_monitor.memory.probe import MemoryProbe
from gpu_train_monitor.model.models import TinyCNN, build_model, count_parameters

TRAIN, BATCH = 256, 32
STEPS_PER_EPOCH = TRAIN // BATCH
FAST = dict(device="cpu", model="tiny-cnn", synthetic_samples=TRAIN, batch_size=BATCH, report_interval=0.01)
PHASE_EVENTS = (RunStarted, EpochStarted, StepsReported, EpochEnded, RunFinished)


def make_session(**overrides: object) -> tuple[TrainingSession, list[Event]]:
    events: list[Event] = []
    return TrainingSession(RunConfig(**{**FAST, **overrides}), [events.append]), events  # type: ignore[arg-type]


def of_type(events: list[Event], kind: type) -> list:
    return [event for event in events if isinstance(event, kind)]


def all_losses(events: list[Event]) -> list[float]:
    return [loss for report in of_type(events, StepsReported) for loss in report.losses]


def on_first(kind: type, action: Callable[[Event], None]) -> Callable[[Event], None]:
    """An observer that runs `action` once, on the first event of `kind`."""
    done = threading.Event()

    def observer(event: Event) -> None:
        if isinstance(event, kind) and not done.is_set():
            done.set()
            action(event)

    return observer


def from_another_thread(command: Callable[[], None]) -> None:
    """Call `command` from a fresh thread and wait for it: what a GUI button does, at a known step."""
    thread = threading.Thread(target=command)
    thread.start()
    thread.join(timeout=10)


# --- the event stream ---------------------------------------------------------------------------------


def test_events_follow_the_loop_phases_with_contiguous_steps() -> None:
    session, events = make_session(epochs=2)
    finished = session.run()
    phases = [event for event in events if isinstance(event, PHASE_EVENTS)]
    kinds = [type(event).__name__ for event in phases]
    assert kinds[0] == "RunStarted" and kinds[-1] == "RunFinished"
    compact = [k for i, k in enumerate(kinds) if k != "StepsReported" or kinds[i - 1] != "StepsReported"]
    assert compact == [
        "RunStarted",
        "EpochStarted",
        "StepsReported",
        "EpochEnded",
        "EpochStarted",
        "StepsReported",
        "EpochEnded",
        "RunFinished",
    ]
    assert finished is phases[-1]

    started = phases[0]
    assert started.device == "cpu" and started.placement == "resident"  # 512 images fit in memory: auto keeps them
    assert started.steps_per_epoch == STEPS_PER_EPOCH and started.total_steps == 2 * STEPS_PER_EPOCH
    assert (started.train_samples, started.val_samples) == (TRAIN, 256)
    assert started.parameters == count_parameters(TinyCNN(10))
    assert started.dataset_bytes == synthetic_bytes(TRAIN)
    assert started.config["batch_size"] == BATCH and started.config["device"] == "cpu"

    assert [(e.epoch, e.step) for e in of_type(events, EpochStarted)] == [(1, 0), (2, STEPS_PER_EPOCH)]
    assert [(e.epoch, e.step) for e in of_type(events, EpochEnded)] == [(1, STEPS_PER_EPOCH), (2, 2 * STEPS_PER_EPOCH)]

    reports = of_type(events, StepsReported)
    expected_first = 1
    for report in reports:
        assert report.first_step == expected_first  # no step lost or repeated between reports
        assert report.step == report.first_step + len(report.losses) - 1
        assert report.samples == report.step * BATCH and report.batch_size == BATCH
        assert report.epoch == (1 if report.step <= STEPS_PER_EPOCH else 2)
        assert all(math.isfinite(loss) and loss > 0 for loss in report.losses)
        assert report.memory.device == "cpu" and report.memory.process_rss_bytes > 0
        expected_first = report.step + 1
    assert reports[-1].step == finished.step == 2 * STEPS_PER_EPOCH
    assert [r.elapsed_s for r in reports] == sorted(r.elapsed_s for r in reports)
    assert session.loss_fetches == len(reports)

    assert (finished.status, finished.message, finished.user_error) == ("completed", "", False)
    summary = finished.summary
    assert summary.steps == 2 * STEPS_PER_EPOCH and summary.samples == 2 * TRAIN
    assert summary.loss_first == reports[0].losses[0]  # the first and last steps' own losses, not report means
    assert summary.loss_last == reports[-1].losses[-1]
    epoch_ends = of_type(events, EpochEnded)
    assert summary.val_accuracy == epoch_ends[-1].val_accuracy
    for end, epoch in zip(epoch_ends, (1, 2)):
        losses = [loss for r in reports if r.epoch == epoch for loss in r.losses]
        assert end.train_loss == pytest.approx(statistics.fmean(losses))
        assert 0.0 <= end.val_accuracy <= 1.0 and end.val_loss > 0


def test_max_steps_ends_the_run_mid_epoch_and_still_validates() -> None:
    session, events = make_session(epochs=3, max_steps=5)
    finished = session.run()
    assert (finished.status, finished.step) == ("completed", 5)
    assert of_type(events, RunStarted)[0].total_steps == 5
    assert [(e.epoch, e.step) for e in of_type(events, EpochEnded)] == [(1, 5)]
    assert of_type(events, EpochEnded)[0].val_accuracy is not None
    assert not of_type(events, EpochEnded)[0].complete  # the steps ran out, not the data: no epoch-end marker


def test_an_epoch_whose_data_ran_out_is_complete() -> None:
    session, events = make_session(epochs=1)
    session.run()
    assert [e.complete for e in of_type(events, EpochEnded)] == [True]


def test_the_same_seed_trains_the_same_losses_and_another_seed_does_not() -> None:
    runs = []
    for seed in (0, 0, 1):
        session, events = make_session(max_steps=4, seed=seed)
        session.run()
        runs.append(all_losses(events))
    assert len(runs[0]) == 4
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_training_on_synthetic_data_halves_the_loss_within_300_steps() -> None:
    session, events = make_session(batch_size=128, synthetic_samples=2560, epochs=15, max_steps=300)
    seen: list[float] = []

    def stop_once_halved(event: Event) -> None:
        if isinstance(event, StepsReported):
            seen.extend(event.losses)
            if len(seen) >= 5 and statistics.fmean(seen[-5:]) < seen[0] / 2:
                session.request_stop()  # proven: no need to train the other steps

    session.observers.append(stop_once_halved)
    finished = session.run()
    assert finished.status == "stopped", f"the loss did not halve in {finished.step} steps: {seen[:3]} -> {seen[-3:]}"
    assert finished.step <= 300
    assert statistics.fmean(seen[-5:]) < seen[0] / 2


# --- no host sync per step ----------------------------------------------------------------------------


@pytest.fixture
def host_syncs(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts Tensor.item/tolist/numpy/cpu calls (each one waits for the device), by caller: 'core' or 'other'."""
    counts: Counter[str] = Counter()

    def counting(name: str) -> Callable[..., object]:
        original = getattr(torch.Tensor, name)

        def wrapper(self: torch.Tensor, *args: object, **kwargs: object) -> object:
            caller = sys._getframe(1).f_globals.get("__name__", "")
            counts[f"{name}:{'core' if caller.startswith('gpu_train_monitor.') else 'other'}"] += 1
            return original(self, *args, **kwargs)

        return wrapper

    for name in ("item", "tolist", "numpy", "cpu"):
        monkeypatch.setattr(torch.Tensor, name, counting(name))
    return counts


@pytest.mark.parametrize("placement", ["resident", "stream"])
def test_losses_are_fetched_once_per_report_not_once_per_step(placement: str, host_syncs: Counter[str]) -> None:
    epochs = 2
    session, events = make_session(
        epochs=epochs, placement=placement, synthetic_samples=256, batch_size=16, report_interval=10.0
    )  # reports at epoch ends only
    finished = session.run()
    reports = len(of_type(events, StepsReported))
    assert finished.status == "completed" and finished.step == epochs * 256 // 16
    assert session.loss_fetches == reports == epochs < finished.step
    bound = reports + epochs  # one loss fetch per report, one accuracy fetch per epoch
    for name in ("item", "tolist", "numpy", "cpu"):
        assert host_syncs[f"{name}:core"] <= bound, host_syncs
    fetches = sum(host_syncs[f"{name}:{who}"] for name in ("item", "tolist", "numpy") for who in ("core", "other"))
    if placement == "resident":  # nothing else in the loop (model, optimizer, batches) fetches either
        assert fetches <= bound, host_syncs
    else:  # each DataLoader pass also draws a seed and a host-side shuffle order: per epoch, not per step
        assert fetches < finished.step // 2, host_syncs


# --- commands from other threads ----------------------------------------------------------------------


def test_stop_from_another_thread_lands_within_one_step() -> None:
    session, events = make_session(epochs=3)
    requested_at: list[int] = []

    def stop(event: Event) -> None:
        requested_at.append(event.step)  # type: ignore[union-attr]
        from_another_thread(session.request_stop)

    session.observers.append(on_first(StepsReported, stop))
    finished = session.run()
    assert finished.status == "stopped" and finished.message == "stopped by request"
    assert requested_at[0] <= finished.step <= requested_at[0] + 1
    assert finished.summary.status == "stopped" and finished.summary.steps == finished.step
    assert of_type(events, StepsReported)[-1].step == finished.step  # the last steps' losses are reported too
    assert events[-1] is finished
    assert not of_type(events, EpochEnded)  # no validation after a stop


def test_stop_while_paused_ends_the_run() -> None:
    session, events = make_session(epochs=3)
    session.observers.append(on_first(RunPaused, lambda event: threading.Timer(0.1, session.request_stop).start()))
    session.observers.append(on_first(StepsReported, lambda event: from_another_thread(session.pause)))
    finished = session.run()
    assert finished.status == "stopped"
    assert finished.step == of_type(events, RunPaused)[0].step
    assert not of_type(events, RunResumed)


def test_pause_holds_the_run_and_resume_continues_to_the_end() -> None:
    session, events = make_session(epochs=1, max_steps=6)
    paused = threading.Event()
    session.observers.append(on_first(RunPaused, lambda event: paused.set()))
    session.observers.append(on_first(StepsReported, lambda event: from_another_thread(session.pause)))
    reports_while_paused: list[int] = []

    def controller() -> None:
        assert paused.wait(timeout=60)
        before = len(of_type(events, StepsReported))
        time.sleep(0.5)
        session.request_cache_clear()  # applied while paused: the memory plot shows it at once
        time.sleep(0.2)
        reports_while_paused.append(len(of_type(events, StepsReported)) - before)
        session.resume()

    thread = threading.Thread(target=controller)
    thread.start()
    finished = session.run()
    thread.join(timeout=10)

    pause, resume = of_type(events, RunPaused)[0], of_type(events, RunResumed)[0]
    assert reports_while_paused == [0]
    assert pause.step == resume.step
    order = [type(e).__name__ for e in events if isinstance(e, (RunPaused, CacheCleared, RunResumed))]
    assert order == ["RunPaused", "CacheCleared", "RunResumed"]
    reports = of_type(events, StepsReported)
    before_pause = [r for r in reports if events.index(r) < events.index(pause)]
    assert before_pause[-1].step == pause.step  # the plot is up to date while paused
    assert (finished.status, finished.step) == ("completed", 6)


def test_a_checkpoint_requested_while_paused_is_saved_at_once_at_the_paused_step(tmp_path: Path) -> None:
    session, events = make_session(epochs=3)
    target = tmp_path / "now.pt"
    session.observers.append(on_first(StepsReported, lambda event: from_another_thread(session.pause)))
    session.observers.append(
        on_first(RunPaused, lambda event: from_another_thread(lambda: session.request_checkpoint(str(target))))
    )
    session.observers.append(on_first(CheckpointSaved, lambda event: from_another_thread(session.resume)))
    finished = session.run()
    saved = of_type(events, CheckpointSaved)
    paused, resumed = of_type(events, RunPaused)[0], of_type(events, RunResumed)[0]
    assert len(saved) == 1 and saved[0].reason == "request" and saved[0].path == str(target)
    assert saved[0].step == paused.step == resumed.step  # answered while paused, before Resume
    assert events.index(paused) < events.index(saved[0]) < events.index(resumed)
    assert target.is_file() and saved[0].size_bytes == target.stat().st_size
    assert finished.status == "completed"


def test_cache_clear_mid_run_is_reported_and_frees_nothing_on_the_cpu() -> None:
    session, events = make_session(epochs=1, max_steps=4)
    at: list[int] = []

    def clear(event: Event) -> None:
        at.append(event.step)  # type: ignore[union-attr]
        from_another_thread(session.request_cache_clear)

    session.observers.append(on_first(StepsReported, clear))
    finished = session.run()
    cleared = of_type(events, CacheCleared)
    assert len(cleared) == 1
    assert cleared[0].step == at[0]
    assert cleared[0].freed_bytes == 0
    assert cleared[0].memory.device == "cpu" and cleared[0].memory.allocated_bytes > 0
    notes = [e.text for e in of_type(events, LogMessage)]
    assert any("nothing to clear" in text for text in notes)
    assert finished.status == "completed"


# --- how runs end badly -------------------------------------------------------------------------------


def test_a_nan_loss_ends_the_run_as_diverged_at_its_step() -> None:
    # squeezenet has no batch norm: at lr 10 its loss overflows to nan within a few steps
    session, events = make_session(model="squeezenet1_1", optimizer="adamw", lr=10.0, batch_size=16, max_steps=40)
    finished = session.run()
    assert finished.status == "diverged"
    losses = all_losses(events)
    bad_step = next(step for step, loss in enumerate(losses, start=1) if not math.isfinite(loss))
    assert f"at step {bad_step}" in finished.message and "lower the learning rate" in finished.message
    assert finished.step == len(losses) >= bad_step  # stops at the report that saw it
    assert finished.step < 40
    assert isinstance(events[-2], StepsReported)  # the plot receives the bad value before the end
    assert finished.summary.status == "diverged"
    # the summary's losses are the steps' own: the last is the one it ended in, not a finite mean before it
    assert finished.summary.loss_first == losses[0]
    assert not math.isfinite(finished.summary.loss_last)


class OutOfMemoryOnce(nn.Module):
    """A real model whose `at`-th training forward pass raises CUDA's out-of-memory error, once."""

    def __init__(self, inner: nn.Module, at: int) -> None:
        super().__init__()
        self.inner, self.at, self.calls = inner, at, 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            self.calls += 1
            if self.calls == self.at:
                raise torch.OutOfMemoryError(
                    "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                    "capacity of 23.55 GiB of which 1.06 GiB is free."
                )
        return self.inner(x)


@pytest.fixture
def out_of_memory_at_step_3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        gpu_train_monitor.engine.recipe,
        "build_model",
        lambda name, classes, channels: OutOfMemoryOnce(build_model(name, classes, channels), at=3),
    )


def test_out_of_memory_stops_the_run_with_status_oom(out_of_memory_at_step_3: None) -> None:
    session, events = make_session(epochs=1, on_oom="stop", report_interval=10.0)  # steps 1-2 still buffered
    finished = session.run()
    assert finished.status == "oom" and finished.step == 2
    assert not finished.user_error
    oom = of_type(events, OutOfMemory)
    assert len(oom) == 1
    assert (oom[0].step, oom[0].batch_size, oom[0].action, oom[0].new_batch_size) == (2, BATCH, "stop", None)
    assert oom[0].requested_bytes == 2 * 2**30
    assert "batch size 32" in oom[0].message and "2.15 GB" in oom[0].message
    assert "--on-oom shrink" in finished.message
    assert of_type(events, StepsReported)[-1].step == finished.step  # the steps before it are reported


@pytest.mark.parametrize("placement", ["resident", "stream"])
def test_out_of_memory_with_shrink_halves_the_batch_and_completes(
    placement: str, out_of_memory_at_step_3: None
) -> None:
    session, events = make_session(epochs=1, max_steps=8, on_oom="shrink", placement=placement)
    finished = session.run()
    assert (finished.status, finished.step) == ("completed", 8)
    oom = of_type(events, OutOfMemory)
    assert [(e.step, e.batch_size, e.action, e.new_batch_size) for e in oom] == [(2, BATCH, "shrink", BATCH // 2)]
    reports = of_type(events, StepsReported)
    assert all(r.batch_size == BATCH // 2 for r in reports if r.first_step > 2)
    assert finished.summary.samples == 2 * BATCH + 6 * (BATCH // 2)
    assert any("continuing with batch size 16" in e.message for e in of_type(events, OutOfMemory))


def test_bad_input_found_during_setup_ends_the_run_as_a_user_error() -> None:
    missing = (torch.cuda.device_count() if torch.cuda.is_available() else 0) + 7
    session, events = make_session(device=f"cuda:{missing}")
    finished = session.run()  # returns: a GUI worker thread must never see an exception
    assert finished.status == "failed" and finished.user_error
    assert finished.message.startswith("device: ") and "available: cpu" in finished.message
    assert not of_type(events, RunStarted)
    assert events == [finished]


def test_a_crash_inside_the_loop_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken(nn.Linear):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")

    monkeypatch.setattr(
        gpu_train_monitor.engine.recipe, "build_model", lambda name, classes, channels: Broken(3, classes)
    )
    session, events = make_session()
    finished = session.run()
    assert finished.status == "failed" and not finished.user_error
    assert finished.message == "RuntimeError: mat1 and mat2 shapes cannot be multiplied"
    assert of_type(events, RunStarted) and events[-1] is finished


# --- where the data goes ------------------------------------------------------------------------------


def test_auto_streams_a_dataset_that_does_not_fit_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(MemoryProbe, "free_bytes", lambda self: synthetic_bytes(TRAIN) // 2)
    session, events = make_session(max_steps=2)
    finished = session.run()
    assert finished.status == "completed"
    assert of_type(events, RunStarted)[0].placement == "stream"
    warnings = [e.text for e in of_type(events, LogMessage) if e.level == "warning"]
    assert any("does not fit" in text and "streaming" in text for text in warnings)


def test_resident_refuses_a_dataset_that_does_not_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(MemoryProbe, "free_bytes", lambda self: synthetic_bytes(TRAIN) // 2)
    session, events = make_session(placement="resident")
    finished = session.run()
    assert finished.status == "failed" and finished.user_error
    assert finished.message.startswith("placement: ") and "--placement stream" in finished.message
    # + the epoch's augmented copy of the training images, their order and their labels in that order
    needs = f"needs {format_bytes(synthetic_bytes(TRAIN) + TRAIN * (3 * 32 * 32 + 16))} on cpu"
    free = f"only {format_bytes(synthetic_bytes(TRAIN) // 2)} is free"
    assert needs in finished.message and free in finished.message


@pytest.mark.gpu
@pytest.mark.parametrize("placement", ["resident", "stream"])
def test_a_short_run_on_the_gpu_reports_allocator_memory(placement: str) -> None:
    session, events = make_session(device="cuda:0", placement=placement, max_steps=4)
    # requested as the epoch starts (observers run in the session's thread, in order), so it is applied at
    # the first step boundary however fast the steps are: a request at the first report could come too late
    session.observers.append(on_first(EpochStarted, lambda event: session.request_cache_clear()))
    finished = session.run()
    assert (finished.status, finished.step) == ("completed", 4), finished.message
    started = of_type(events, RunStarted)[0]
    assert started.device == "cuda:0" and started.placement == placement
    reports = of_type(events, StepsReported)
    assert all(r.memory.has_allocator and r.memory.allocated_bytes > 0 for r in reports)
    assert session.loss_fetches == len(reports)
    assert len(of_type(events, CacheCleared)) == 1 and of_type(events, CacheCleared)[0].freed_bytes >= 0
    assert finished.summary.device == "cuda:0"
    assert finished.summary.peak_reserved_bytes >= finished.summary.peak_allocated_bytes > 0
