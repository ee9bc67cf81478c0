"""Where a step's time goes: each phase of every training step timed on the host's clock, a report's medians,
and the verdict a user acts on (is the run waiting for its data?).

The loop marks the phases as they end (gpu_train_monitor.events.events.STEP_PHASES): the batch source the data and
the copy (`BatchEpoch.copy_s`: the part of `next()` that took the batch to the device), the training step
forward, backward and optimizer, and the loop the recording after them. One `perf_counter()` a mark, a few
microseconds a step, no device work and no host sync: on a GPU the host runs ahead of the device, so these are
the times the host spent issuing each phase (a phase that waits for the device, such as a copy from pageable
memory, shows that wait). On CUDA the GPU's own times come beside them (gpu_train_monitor.engine.device_phases: events
at the same marks, read once done) with how often the GPU had caught up with the host. A report carries each phase's
median over its steps (`StepPhases`); the run's summary the medians over its reports after the warm-up, and the
verdict.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from time import perf_counter

from ..base.text import Message
from ..events.events import STEP_PHASES, StepPhases
from .device_phases import DevicePhases

INPUT_BOUND_SHARE = 0.3  # data and copy this much of a step: the run waits for its data
HOST_BOUND_SHARE = 0.5  # the GPU caught up with the host at this share of step starts: it waits for launches
_INDEX = {phase: index for index, phase in enumerate(STEP_PHASES)}


class PhaseTimer:
    """The phases of each step, from `start()` to `end()`, kept until the report takes their medians."""

    def __init__(self) -> None:
        self._steps: list[list[float]] = []  # per step: seconds of each phase, in STEP_PHASES order
        self._walls: list[float] = []  # per step: from its start to the next step's start
        self._current: list[float] | None = None
        self._last = 0.0  # the latest mark
        self._started = 0.0  # when the current step started
        self._device: DevicePhases | None = None

    def on_device(self, device: object) -> None:
        """Time the steps on `device`'s own clock too, when it is a CUDA GPU (events on its stream)."""
        import torch

        if isinstance(device, torch.device) and device.type == "cuda":
            self._device = DevicePhases(lambda: torch.cuda.Event(enable_timing=True))

    def start(self) -> None:
        if self._device is not None:
            self._device.start()
        now = perf_counter()
        if self._current is not None:  # the previous step ended: its wall time runs to this start
            self._walls.append(now - self._started)
        self._current = [0.0] * len(STEP_PHASES)
        self._started = self._last = now

    def mark(self, phase: str) -> None:
        """`phase` has just ended: the time since the previous mark is its."""
        now, current = perf_counter(), self._current
        if current is not None:
            current[_INDEX[phase]] += now - self._last
            if self._device is not None:
                self._device.mark(phase)
        self._last = now

    def mark_at(self, phase: str, ended: float) -> None:
        """`phase` ended at `ended` (a `perf_counter()` taken then, by a hook that must stay cheap: a gradient's
        accumulation), told at the next mark: the time since the previous mark up to `ended` is its."""
        current = self._current
        if current is not None and ended > self._last:
            current[_INDEX[phase]] += ended - self._last
            if self._device is not None:  # the GPU's clock: the stream has had no work since, so it is marked now
                self._device.mark(phase)
            self._last = ended

    def split(self, phase: str, seconds: float, into: str) -> None:
        """Of the time marked as `phase` in this step, `seconds` were `into`'s (the batch's copy inside next())."""
        if self._current is not None and seconds > 0:
            moved = min(seconds, self._current[_INDEX[phase]])
            self._current[_INDEX[phase]] -= moved
            self._current[_INDEX[into]] += moved

    def end(self) -> None:
        """The step is done (its recording marked): kept for the report."""
        if self._current is not None:
            self._steps.append(self._current)
            if self._device is not None:
                self._device.end()

    def drop(self) -> None:
        """The step did not train (out of memory, the epoch's end): nothing of it is kept."""
        self._current = None
        if self._device is not None:
            self._device.drop()

    def take(self) -> StepPhases | None:
        """The medians of the steps since the last take (None when none was timed)."""
        steps, walls = self._steps, self._walls
        self._steps, self._walls = [], []
        device, caught_up = self._device.take() if self._device is not None else (None, None)
        if not steps:
            return None
        seconds = tuple(statistics.median(phase) for phase in zip(*steps, strict=True))
        step_s = statistics.median(walls) if walls else sum(seconds)
        return StepPhases(seconds, step_s, device, caught_up)


def run_phases(reports: Sequence[StepPhases]) -> StepPhases | None:
    """A run's phases: the medians over its reports (after the warm-up report, when there are others)."""
    kept = list(reports[1:] or reports)
    if not kept:
        return None
    seconds = tuple(statistics.median(r.seconds[i] for r in kept) for i in range(len(STEP_PHASES)))
    timed = [r.device_seconds for r in kept if r.device_seconds is not None]
    device = tuple(statistics.median(d[i] for d in timed) for i in range(len(STEP_PHASES))) if timed else None
    caught = [r.caught_up for r in kept if r.caught_up is not None]
    return StepPhases(
        seconds, statistics.median(r.step_s for r in kept), device, statistics.median(caught) if caught else None
    )


@dataclass(frozen=True)
class Verdict:
    """What bounds a run's steps: `kind` is "input-bound", "host-bound" (on CUDA only: it needs the device's own
    timing) or "compute-bound"; `share` the part of a step (or of step starts) that decided it; `advice` what to
    try, for people."""

    kind: str
    share: float
    advice: Message


def verdict(phases: StepPhases) -> Verdict:
    """Input-bound when the data and its copy take INPUT_BOUND_SHARE of a step or more; else host-bound when the
    GPU had caught up with the host at HOST_BOUND_SHARE of step starts or more (it idles between kernels while
    the host launches them); else compute-bound."""
    total = sum(phases.seconds) or phases.step_s
    values = phases.as_dict()
    waiting = (values["data"] + values["copy"]) / total if total > 0 else 0.0
    if waiting >= INPUT_BOUND_SHARE:
        return Verdict(
            "input-bound",
            waiting,
            Message(
                "the training waits for its data {percent:.0f}% of each step: try resident placement, loader "
                "workers, pin_memory",
                percent=100 * waiting,
            ),
        )
    if phases.caught_up is not None and phases.caught_up >= HOST_BOUND_SHARE:
        return Verdict(
            "host-bound",
            phases.caught_up,
            Message(
                "the GPU ran out of work before the host launched more at {percent:.0f}% of step starts (it idles "
                "between kernels): try torch.compile, CUDA graphs, a larger batch",
                percent=100 * phases.caught_up,
            ),
        )
    work = (values["forward"] + values["backward"] + values["optimizer"]) / total if total > 0 else 0.0
    return Verdict(
        "compute-bound",
        work,
        Message(
            "forward, backward and the update take {percent:.0f}% of each step: a faster device, mixed precision "
            "or a smaller model is what speeds it up",
            percent=100 * work,
        ),
    )
