"""The phases of a step as the GPU ran them: CUDA events recorded on the stream at the phase boundaries the host
marks, read only once `query()` says they are done (never a wait), and whether the GPU had caught up with the host
when the host began the next step (it then idles between kernels: the run is bound by the host's launches).

One step in DEVICE_EVERY is timed on the device, so a step costs a few event records only now and then (an event
record is a few microseconds of host time). Between two marks the GPU
ran the kernels the host launched in that phase and waited for the next ones: a phase's device time is the span
between its events on the GPU's clock. The data span (from the step's start to its batch on the device) holds the
copy and the device's wait for the batch; there is no event inside `next()`, so the copy has no span of its own.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Callable
from typing import Any

from ..events.events import STEP_PHASES

DEVICE_EVERY = 4  # one step in this many is timed on the device
_INDEX = {phase: index for index, phase in enumerate(STEP_PHASES)}


class DevicePhases:
    """Events at the phase boundaries of one step in DEVICE_EVERY, and the caught-up check after each."""

    def __init__(self, new_event: Callable[[], Any]) -> None:
        """`new_event`: makes an event with timing (`torch.cuda.Event(enable_timing=True)`)."""
        self._new_event = new_event
        self._steps: deque[tuple[list[str], list[Any]]] = deque()  # timed steps, oldest first: marks, events
        self._current: tuple[list[str], list[Any]] | None = None
        self._count = 0
        self._boundary: Any = None  # the last event of the latest timed step: has the GPU reached it?
        self._caught_up: list[bool] = []

    def _event(self) -> Any:
        event = self._new_event()
        event.record()  # on the current stream, after the work the host launched so far
        return event

    def start(self) -> None:
        """A step starts on the host: whether the GPU already ran the previous (timed) step to its end, and the
        first event when this step is timed."""
        if self._boundary is not None:
            self._caught_up.append(bool(self._boundary.query()))
            self._boundary = None
        self._count += 1
        self._current = ([], [self._event()]) if self._count % DEVICE_EVERY == 1 else None

    def mark(self, phase: str) -> None:
        if self._current is not None:
            self._current[0].append(phase)
            self._current[1].append(self._event())

    def end(self) -> None:
        if self._current is not None:
            self._steps.append(self._current)
            self._boundary = self._current[1][-1]
            self._current = None

    def drop(self) -> None:
        self._current = None

    def take(self) -> tuple[tuple[float, ...] | None, float | None]:
        """Each phase's median device seconds over the timed steps the GPU has finished (the others wait for a
        later take), and the share of step starts at which the GPU had caught up with the host."""
        done: list[list[float]] = []
        while self._steps and self._steps[0][1][-1].query():
            marks, events = self._steps.popleft()
            seconds = [0.0] * len(STEP_PHASES)
            for phase, before, after in zip(marks, events, events[1:], strict=False):
                seconds[_INDEX[phase]] += before.elapsed_time(after) / 1000.0  # milliseconds on the GPU's clock
            done.append(seconds)
        caught, self._caught_up = self._caught_up, []
        share = sum(caught) / len(caught) if caught else None
        if not done:
            return None, share
        return tuple(statistics.median(step[i] for step in done) for i in range(len(STEP_PHASES))), share
