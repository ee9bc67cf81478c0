"""The GPU's own clock for a step's phases: events at the host's marks on one step in DEVICE_EVERY, read only once
done, and how often the GPU had caught up with the host; what that makes of the verdict.

There is no GPU here: `GpuClock` plays the stream. Each recorded event is stamped with the time the GPU will reach
it and counts as done once the GPU's clock has passed that time, as `torch.cuda.Event.query()` answers. The same
bookkeeping runs on real CUDA events in tests/gpu/test_step_phases.py.
"""

from __future__ import annotations

import pytest

from gpu_train_monitor.engine.device_phases import DEVICE_EVERY, DevicePhases
from gpu_train_monitor.engine.step_phases import HOST_BOUND_SHARE, run_phases, verdict
from gpu_train_monitor.events.events import STEP_PHASES, StepPhases


class GpuClock:
    """A stream that runs `work[phase]` ms of kernels for each phase the host marks; `now` is how far it got."""

    def __init__(self, work: dict[str, float]) -> None:
        self.work, self.queued_until, self.now = work, 0.0, 0.0
        self.next_phase = "data"

    def event(self) -> Stamped:
        return Stamped(self)


class Stamped:
    def __init__(self, clock: GpuClock) -> None:
        self.clock, self.at = clock, None

    def record(self) -> None:
        self.at = self.clock.queued_until

    def query(self) -> bool:
        return self.at is not None and self.clock.now >= self.at

    def elapsed_time(self, later: Stamped) -> float:
        assert self.query() and later.query(), "elapsed_time of an event not done: torch would raise"
        return later.at - self.at


def one_step(device: DevicePhases, clock: GpuClock) -> None:
    device.start()
    for phase in ("data", "forward", "backward", "optimizer", "recording"):
        clock.queued_until += clock.work.get(phase, 0.0)  # the kernels the host launched in the phase
        device.mark(phase)
    device.end()


def test_a_timed_steps_phases_are_the_gpus_spans_and_wait_until_it_has_run_them() -> None:
    clock = GpuClock({"data": 1.0, "forward": 4.0, "backward": 8.0, "optimizer": 2.0})
    device = DevicePhases(clock.event)
    for _ in range(DEVICE_EVERY):  # the first is timed
        one_step(device, clock)
    assert device.take() == (None, 0.0)  # the GPU has run nothing yet: nor had it caught up at the next start
    clock.now = clock.queued_until  # it catches up
    seconds, _ = device.take()
    assert seconds is not None
    assert dict(zip(STEP_PHASES, seconds, strict=True)) == pytest.approx(
        {"data": 0.001, "copy": 0.0, "forward": 0.004, "backward": 0.008, "optimizer": 0.002, "recording": 0.0}
    )
    assert device.take() == (None, None)  # read once


def test_only_one_step_in_device_every_is_timed() -> None:
    clock = GpuClock({"forward": 1.0})
    made: list[Stamped] = []

    def counted() -> Stamped:
        made.append(clock.event())
        return made[-1]

    device = DevicePhases(counted)
    for _ in range(4 * DEVICE_EVERY):
        one_step(device, clock)
    assert len(made) == 4 * (1 + 5)  # four timed steps: a start and five marks each


def test_a_gpu_that_waits_for_the_host_is_seen_at_the_next_steps_start() -> None:
    clock = GpuClock({"forward": 1.0})
    device = DevicePhases(clock.event)
    for _ in range(3 * DEVICE_EVERY):
        one_step(device, clock)
        clock.now = clock.queued_until  # the GPU runs each step as soon as it is launched: it then waits
    assert device.take()[1] == 1.0
    for _ in range(2 * DEVICE_EVERY):
        one_step(device, clock)  # the GPU lags: still busy when the host starts the next step
    assert device.take()[1] == 0.0


def test_host_bound_when_the_gpu_caught_up_and_the_data_is_not_what_it_waits_for() -> None:
    compute = (0.001, 0.0, 0.004, 0.008, 0.002, 0.0001)
    starved = StepPhases(compute, sum(compute), compute, caught_up=0.9)
    found = verdict(starved)
    assert found.kind == "host-bound" and found.share == 0.9 and "torch.compile" in str(found.advice)
    assert verdict(StepPhases(compute, sum(compute), compute, caught_up=HOST_BOUND_SHARE - 0.1)).kind == "compute-bound"
    assert verdict(StepPhases(compute, sum(compute))).kind == "compute-bound"  # no device timing: never host-bound
    waiting = (0.02, 0.001, 0.004, 0.008, 0.002, 0.0001)
    assert verdict(StepPhases(waiting, sum(waiting), caught_up=0.9)).kind == "input-bound"  # the data first


def test_a_runs_device_phases_are_the_medians_over_its_reports_after_the_first() -> None:
    host = (0.001,) * len(STEP_PHASES)
    reports = [
        StepPhases(host, 0.006, tuple(x * 9 for x in host), 0.0),  # warm-up
        StepPhases(host, 0.006, host, 0.8),
        StepPhases(host, 0.006, tuple(x * 3 for x in host), 1.0),
        StepPhases(host, 0.006, None, None),  # a report whose timed step the GPU had not finished
    ]
    run = run_phases(reports)
    assert run is not None and run.device_seconds == pytest.approx((0.002,) * len(STEP_PHASES))
    assert run.caught_up == pytest.approx(0.9)
