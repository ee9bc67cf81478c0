"""A report's losses on their way to the host without a host sync, and the reports that wait for them.

A run keeps each step's loss on the device (no `.item()` a step). At a report they are stacked and copied to the
host with `non_blocking=True`: on CUDA into pinned memory (torch pins the destination of a non-blocking copy from
a CUDA tensor to the CPU), followed by an event on the stream. The host goes on training; a later report reads the
copy once `event.query()` says it is done, so the loss curve runs one report (about 0.1 s) behind and the GPU never
waits for the host. Only where a run must have every loss now (an epoch's end, a pause, a stop, a checkpoint, the
run's end) does it wait for the event, which is the end of work the host already queued, not a stall of the
pipeline. On the CPU the copy is the tensor itself and is done at once. On other devices (MPS) the copy is an
ordinary one, made at the report: one sync per report, as before.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from ..events.events import StepsReported


class Losses(Protocol):
    """A report's losses, one per step: read (`values`) only once `done()`."""

    count: int

    def done(self) -> bool: ...

    def values(self) -> list[float]: ...


class LossesInFlight:
    """The losses of one report, copied to the host without blocking (see the module's docstring)."""

    def __init__(self, losses: list[torch.Tensor]) -> None:
        self.count = len(losses)
        stacked = torch.stack(losses).float()
        self._event: torch.cuda.Event | None = None
        if stacked.device.type == "cuda":
            self._host = stacked.to("cpu", non_blocking=True)  # into pinned memory: no sync
            self._event = torch.cuda.Event()
            self._event.record()
        elif stacked.device.type == "cpu":
            self._host = stacked.to("cpu", non_blocking=True)  # the tensor itself: nothing to wait for
        else:  # MPS and others: an ordinary copy (sync point: one per report)
            self._host = stacked.cpu()

    def done(self) -> bool:
        """Whether the copy has reached the host (a query, never a wait)."""
        return self._event is None or self._event.query()

    def values(self) -> list[float]:
        """The losses; waits for the copy when it is not done yet (only where the run must have them now)."""
        if self._event is not None:
            self._event.synchronize()  # the end of the queued work: a no-op once done() said so
        return self._host.tolist()


@dataclass(frozen=True)
class LossesRead:
    """Losses already on the host (a data-parallel report's, which its ranks agree on at once)."""

    read: list[float]

    @property
    def count(self) -> int:
        return len(self.read)

    def done(self) -> bool:
        return True

    def values(self) -> list[float]:
        return self.read


@dataclass(frozen=True)
class Arrived:
    """A report whose losses have reached the host, and what its maker kept beside it (`extra`)."""

    report: StepsReported
    losses: list[float]
    extra: Any


class ReportsInFlight:
    """Reports made (their steps, rate, memory and phases as they were then) whose losses are still on their way,
    in order: a report is emitted only after every earlier one."""

    def __init__(self) -> None:
        self._queue: deque[tuple[StepsReported, Losses, Any]] = deque()

    def __bool__(self) -> bool:
        return bool(self._queue)

    def add(self, report: StepsReported, losses: Losses, extra: Any = None) -> None:
        self._queue.append((report, losses, extra))

    def arrived(self, wait: bool) -> Iterator[Arrived]:
        """The reports whose losses are on the host, oldest first; with `wait`, every one (waiting for copies)."""
        while self._queue and (wait or self._queue[0][1].done()):
            report, losses, extra = self._queue.popleft()
            yield Arrived(report, losses.values(), extra)

    def clear(self) -> None:
        self._queue.clear()
