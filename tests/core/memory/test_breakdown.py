"""What holds the memory of a training step (the "Memory breakdown" tab and the summary's memory_breakdown).

The expected bytes are worked out by hand for a model small enough to count: every term is written
out, so a change in what the breakdown counts (a forgotten buffer, a CPU step counter counted as device
memory, weights counted as activations) shows up as a wrong number.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch
from torch import nn

import gpu_train_monitor.engine.loop_state
import gpu_train_monitor.engine.recipe
import gpu_train_monitor.engine.report
import gpu_train_monitor.engine.session
import gpu_train_monitor.engine.strategy
from gpu_train_monitor.cli.main import main
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import PHASES, MemoryBreakdown, RunFinished, StepsReported
from gpu_train_monitor.memory.breakdown import StepMemoryRecorder, optimizer_bytes
from gpu_train_monitor.memory.probe import MemoryProbe
from gpu_train_monitor.model.step import TrainingStep, build_optimizer

F32, I64 = 4, 8
HIDDEN, CLASSES = 16, 10


def known_model(features: int) -> nn.Sequential:
    """Flatten -> Linear(features, 16) -> BatchNorm1d(16) -> ReLU -> Linear(16, 10)."""
    return nn.Sequential(
        nn.Flatten(), nn.Linear(features, HIDDEN), nn.BatchNorm1d(HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES)
    )


def expected(features: int, batch: int, optimizer: str) -> dict[str, int]:
    """The breakdown of one training step of `known_model(features)`, counted by hand."""
    weights = (
        features * HIDDEN
        + HIDDEN  # first Linear: weight + bias
        + HIDDEN
        + HIDDEN  # BatchNorm: weight + bias
        + HIDDEN * CLASSES
        + CLASSES
    )  # second Linear
    buffers = 2 * HIDDEN * F32 + I64  # BatchNorm's running mean and var (float32), num_batches_tracked (int64)
    parameter_tensors = 6
    state = {
        "sgd": weights * F32,  # one momentum buffer per parameter
        # exp_avg + exp_avg_sq per parameter, and a float32 `step` per parameter: on the CPU those
        # counters live on the training device, so they count
        "adamw": 2 * weights * F32 + parameter_tensors * F32,
    }[optimizer]
    activations = (
        batch * HIDDEN * F32  # first Linear's output, saved by BatchNorm
        + 2 * HIDDEN * F32  # BatchNorm's batch mean and inverse std
        + batch * HIDDEN * F32  # ReLU's output, saved by ReLU and the second Linear (counted once)
        + batch * CLASSES * F32  # log_softmax's output, saved by cross_entropy
        + F32
    )  # nll_loss's total weight
    return {
        "params_bytes": weights * F32 + buffers,
        "grads_bytes": weights * F32,
        "optimizer_bytes": state,
        "batch_bytes": batch * features * F32 + batch * I64,  # float32 images, int64 labels
        "activations_bytes": activations,
        "dataset_bytes": 0,
    }  # on the CPU the data is process memory, not a device-side holder


def test_hand_count_matches_the_model_it_describes() -> None:
    """The counting itself, checked once against torch, so the other tests compare against real sizes."""
    model = known_model(48)
    assert sum(p.numel() for p in model.parameters()) * F32 == expected(48, 8, "sgd")["grads_bytes"] == 3944
    assert expected(48, 8, "sgd")["params_bytes"] == 3944 + 136


@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
@pytest.mark.parametrize("batch", [8, 16])
def test_recorder_breakdown_equals_the_hand_count(optimizer: str, batch: int) -> None:
    torch.manual_seed(0)
    model = known_model(48)
    opt = build_optimizer(model, optimizer, lr=0.01, momentum=0.9, weight_decay=0.0)
    trainer = TrainingStep(model, opt, torch.amp.GradScaler("cpu", enabled=False), "cpu", None)
    recorder = StepMemoryRecorder(MemoryProbe("cpu"))
    images, labels = torch.randn(batch, 3, 4, 4), torch.randint(0, CLASSES, (batch,))
    for _ in range(2):  # the second step is measured with the optimizer state already created
        with recorder.step():
            trainer.step(images, labels, recorder)
    breakdown = recorder.breakdown(2, model, opt, images, labels)

    assert breakdown.to_summary() == expected(48, batch, optimizer)
    assert breakdown.total_bytes == sum(expected(48, batch, optimizer).values())
    assert breakdown.step == 2 and breakdown.method == "saved-tensors"
    assert [phase for phase, _ in breakdown.phase_peaks] == list(PHASES)
    assert all(value > 0 for _, value in breakdown.phase_peaks)  # the process's memory at each phase's end


def test_optimizer_state_counts_only_tensors_on_the_training_device() -> None:
    model = known_model(48)
    opt = build_optimizer(model, "adamw", lr=0.01, momentum=0.9, weight_decay=0.0)
    trainer = TrainingStep(model, opt, torch.amp.GradScaler("cpu", enabled=False), "cpu", None)
    trainer.step(torch.randn(4, 3, 4, 4), torch.randint(0, CLASSES, (4,)))
    assert optimizer_bytes(opt, torch.device("cpu")) == expected(48, 4, "adamw")["optimizer_bytes"]
    # a run on a GPU does not hold any of these CPU tensors in device memory
    assert optimizer_bytes(opt, torch.device("cuda")) == 0


def test_a_step_outside_the_recorder_is_not_counted_as_activations() -> None:
    model = known_model(48)
    opt = build_optimizer(model, "sgd", lr=0.01, momentum=0.9, weight_decay=0.0)
    trainer = TrainingStep(model, opt, torch.amp.GradScaler("cpu", enabled=False), "cpu", None)
    recorder = StepMemoryRecorder(MemoryProbe("cpu"))
    small, small_labels = torch.randn(4, 3, 4, 4), torch.randint(0, CLASSES, (4,))
    with recorder.step():
        trainer.step(small, small_labels, recorder)
    trainer.step(torch.randn(64, 3, 4, 4), torch.randint(0, CLASSES, (64,)))  # not sampled
    breakdown = recorder.breakdown(1, model, opt, small, small_labels)
    assert breakdown.activations_bytes == expected(48, 4, "sgd")["activations_bytes"]


# --- through a training run ---------------------------------------------------------------------------

FEATURES = 3 * 32 * 32  # the synthetic dataset's images
BATCH = 32


@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
def test_a_run_reports_the_hand_counted_breakdown_once_per_report(
    monkeypatch: pytest.MonkeyPatch, optimizer: str
) -> None:
    monkeypatch.setattr(
        gpu_train_monitor.engine.recipe, "build_model", lambda name, classes, channels: known_model(FEATURES)
    )
    # every report (by default at most 1/s)
    monkeypatch.setattr(gpu_train_monitor.engine.report, "BREAKDOWN_PERIOD_S", 0.0)
    events: list[object] = []

    def observe(event: object) -> None:
        if isinstance(event, MemoryBreakdown) and not any(isinstance(e, MemoryBreakdown) for e in events):
            time.sleep(0.02)  # a report interval passes during step 1: at least two reports, on any machine
        events.append(event)

    config = RunConfig(
        device="cpu",
        model="tiny-cnn",
        synthetic_samples=256,
        batch_size=BATCH,
        max_steps=6,
        optimizer=optimizer,
        report_interval=0.01,
    )
    finished = TrainingSession(config, [observe]).run()
    assert finished.status == "completed", finished.message

    breakdowns = [e for e in events if isinstance(e, MemoryBreakdown)]
    reports = [e for e in events if isinstance(e, StepsReported)]
    # the first step after each report is measured: one breakdown per report
    assert [b.step for b in breakdowns] == [r.first_step for r in reports]
    want = expected(FEATURES, BATCH, optimizer)
    assert len(reports) >= 2 and reports[0].step == 1
    for b in breakdowns:  # the optimizer state exists from the first step's optimizer.step() on
        assert b.to_summary() == want, b.step
    # the summary (the CLI's --summary-json, the window's end of run) carries the same numbers
    assert isinstance(events[-1], RunFinished)
    assert finished.summary.memory_breakdown == want
    assert finished.summary.to_dict()["memory_breakdown"] == want


TINY_CNN_WEIGHTS = (
    3 * 32 * 9
    + 2 * 32  # conv 3->32 (no bias), BatchNorm(32) weight + bias
    + 32 * 64 * 9
    + 2 * 64  # conv 32->64, BatchNorm(64)
    + 64 * 128 * 9
    + 2 * 128  # conv 64->128, BatchNorm(128)
    + 128 * 10
    + 10
)  # the Linear head
TINY_CNN_BUFFERS = 2 * (32 + 64 + 128) * F32 + 3 * I64  # running mean/var per BatchNorm, num_batches_tracked


def test_cli_summary_json_has_the_memory_breakdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "summary.json"
    code = main(
        [
            "run",
            "--device",
            "cpu",
            "--model",
            "tiny-cnn",
            "--synthetic-samples",
            "256",
            "--batch-size",
            "32",
            "--max-steps",
            "3",
            "--optimizer",
            "sgd",
            "--summary-json",
            str(target),
        ]
    )
    assert code == 0, capsys.readouterr().err
    breakdown = json.loads(target.read_text(encoding="utf-8"))["memory_breakdown"]
    assert set(breakdown) == {
        "params_bytes",
        "grads_bytes",
        "optimizer_bytes",
        "batch_bytes",
        "activations_bytes",
        "dataset_bytes",
    }
    assert breakdown["dataset_bytes"] == 0  # the CPU keeps a resident set in process memory, not a device
    assert breakdown["params_bytes"] == TINY_CNN_WEIGHTS * F32 + TINY_CNN_BUFFERS
    assert breakdown["grads_bytes"] == TINY_CNN_WEIGHTS * F32
    assert breakdown["optimizer_bytes"] == TINY_CNN_WEIGHTS * F32  # SGD momentum: one buffer per weight
    assert breakdown["batch_bytes"] == 32 * 3 * 32 * 32 * F32 + 32 * I64
    # tiny-cnn keeps at least its first conv's output (32 channels at 32x32) per image for backward
    assert breakdown["activations_bytes"] >= 32 * 32 * 32 * 32 * F32


class DrivenClock:
    """`time` for the training loop's modules, whose perf_counter moves `tick` seconds a call: the run lasts as long
    on any machine, however loaded. Everything else is the real `time`."""

    def __init__(self, tick: float) -> None:
        self.tick, self.now = tick, 1000.0

    def perf_counter(self) -> float:
        self.now += self.tick
        return self.now

    def __getattr__(self, name: str) -> object:
        return getattr(time, name)


@pytest.mark.parametrize("tick", [0.0001, 0.1])  # a run well within one period; one of several periods
def test_breakdowns_are_sampled_at_most_once_a_second(monkeypatch: pytest.MonkeyPatch, tick: float) -> None:
    monkeypatch.setattr(
        gpu_train_monitor.engine.recipe, "build_model", lambda name, classes, channels: known_model(FEATURES)
    )
    clock = DrivenClock(tick)
    for module in (
        gpu_train_monitor.engine.session,
        gpu_train_monitor.engine.strategy,  # when a report is due
        gpu_train_monitor.engine.report,
        gpu_train_monitor.engine.loop_state,
    ):
        monkeypatch.setattr(module, "time", clock)
    period = gpu_train_monitor.engine.report.BREAKDOWN_PERIOD_S
    events: list[object] = []
    sampled_at: list[float] = []  # the driven time of each breakdown (the loop reads no clock between)

    def observe(event: object) -> None:
        events.append(event)
        if isinstance(event, MemoryBreakdown):
            sampled_at.append(clock.now)

    config = RunConfig(
        device="cpu", model="tiny-cnn", synthetic_samples=256, batch_size=BATCH, max_steps=8, report_interval=0.01
    )
    started = clock.now
    TrainingSession(config, [observe]).run()
    reports = [e for e in events if isinstance(e, StepsReported)]
    breakdowns = [e for e in events if isinstance(e, MemoryBreakdown)]
    assert breakdowns and breakdowns[0].step == 1  # the first step is sampled
    assert len(breakdowns) <= len(reports)  # at most one per report, never more
    # a later one only on the step after a report, a period or more after the one before
    reported_steps = {report.step for report in reports}
    assert all(breakdown.step - 1 in reported_steps for breakdown in breakdowns[1:])
    assert all(later - earlier >= period for earlier, later in zip(sampled_at, sampled_at[1:]))
    if clock.now - started < period:
        assert len(breakdowns) == 1
    else:  # a run of several periods is sampled again
        assert clock.now - started > 2 * period and len(breakdowns) > 1
