"""Where a step's time goes (gpu_train_monitor.engine.step_phases): every step's phases timed on the host, a
report's medians, the run's in its summary with a verdict, and the CLI's words for them."""

from __future__ import annotations

import pytest
import torch

from gpu_train_monitor.cli.summary_text import summary_text
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine import step_phases
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.engine.step_phases import PhaseTimer, verdict
from gpu_train_monitor.events.events import STEP_PHASES, StepPhases, StepsReported


class Clock:
    """perf_counter() as the test sets it."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


def test_a_phase_marked_at_an_earlier_moment_ends_there_and_the_rest_goes_to_the_next(monkeypatch) -> None:
    """A watched loop's backward ends at its last gradient's accumulation, told at the next forward or update."""
    clock = Clock()
    monkeypatch.setattr(step_phases, "perf_counter", clock.perf_counter)
    timer = PhaseTimer()
    timer.start()
    clock.now = 0.1
    timer.mark("forward")
    grads_done, clock.now = 0.3, 0.35  # the gradients were done at 0.3; the next mark comes at 0.35
    timer.mark_at("backward", grads_done)
    timer.mark("data")  # the next micro-batch's wait
    timer.mark_at("backward", 0.2)  # a moment before the latest mark: nothing moves
    clock.now = 0.4
    timer.mark("recording")
    timer.end()
    phases = timer.take()
    assert phases is not None
    assert phases.as_dict() == pytest.approx(
        {"data": 0.05, "copy": 0.0, "forward": 0.1, "backward": 0.2, "optimizer": 0.0, "recording": 0.05}
    )


def test_a_steps_marks_split_its_time_and_a_report_takes_each_phases_median(monkeypatch) -> None:
    clock = Clock()
    monkeypatch.setattr(step_phases, "perf_counter", clock.perf_counter)
    timer = PhaseTimer()
    for data in (0.010, 0.030, 0.020):  # three steps: only their data time differs
        timer.start()
        for phase, seconds in (("data", data), ("forward", 0.1), ("backward", 0.2), ("optimizer", 0.05)):
            clock.now += seconds
            timer.mark(phase)
        timer.split("data", 0.004, into="copy")  # of next()'s time, the copy's
        clock.now += 0.001
        timer.mark("recording")
        timer.end()
    timer.start()
    timer.drop()  # the epoch's end: no step
    phases = timer.take()
    assert phases is not None
    assert phases.as_dict() == pytest.approx(
        {"data": 0.016, "copy": 0.004, "forward": 0.1, "backward": 0.2, "optimizer": 0.05, "recording": 0.001}
    )
    assert phases.step_s == pytest.approx(0.020 + 0.35 + 0.001)  # the median step, start to next start
    assert timer.take() is None  # taken: the next report has its own steps


@pytest.mark.parametrize(("data", "copy", "kind"), [(0.05, 0.02, "input-bound"), (0.01, 0.01, "compute-bound")])
def test_the_verdict_is_input_bound_when_data_and_copy_take_a_third_of_a_step(data, copy, kind) -> None:
    phases = StepPhases((data, copy, 0.04, 0.04, 0.01, 0.0), data + copy + 0.09)
    found = verdict(phases)
    assert found.kind == kind
    if kind == "input-bound":
        assert "waits for its data 44% of each step" in str(found.advice) and "resident" in str(found.advice)


def run(placement: str) -> tuple[object, list[StepsReported]]:
    torch.set_num_threads(1)
    events: list[object] = []
    config = RunConfig(
        device="cpu", model="tiny-cnn", synthetic_samples=2560, batch_size=64, max_steps=24, placement=placement,
        workers=0, report_interval=0.05,
    )  # fmt: skip
    finished = TrainingSession(config, [events.append]).run()
    assert finished.status == "completed", finished.message
    return finished.summary, [e for e in events if isinstance(e, StepsReported)]


def test_a_runs_phases_add_up_to_its_step_and_a_streamed_run_waits_longer_for_its_data() -> None:
    resident, reports = run("resident")
    streamed, _ = run("stream")
    assert all(report.phases is not None for report in reports[1:])  # every report after the first step's
    for summary in (resident, streamed):
        phases = {name: s for name, s in summary.step_phases_s.items() if name != "step"}
        assert list(phases) == list(STEP_PHASES)
        assert sum(phases.values()) == pytest.approx(summary.step_phases_s["step"], rel=0.05)  # nothing unmarked
        assert summary.verdict in ("input-bound", "compute-bound") and summary.verdict_text
        assert summary.to_dict()["step_phases_s"] == dict(summary.step_phases_s)  # --summary-json has it
    waiting = {
        name: s.step_phases_s["data"] + s.step_phases_s["copy"]
        for name, s in (("resident", resident), ("stream", streamed))
    }
    assert resident.step_phases_s["copy"] == 0.0  # a resident batch is on the device already
    assert waiting["stream"] > waiting["resident"]  # the host batch, its copy and its augmentation
    assert "step time" in summary_text(streamed) and f"verdict     {streamed.verdict}" in summary_text(streamed)
