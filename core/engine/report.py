"""A run's report: the losses buffered on the device sent to the host without a sync
(gpu_train_monitor.engine.loss_transfer), the `StepsReported` event made at the report and completed with its losses
once they arrive, and the checks they go through: a NaN/inf ends the run (`Diverged`), a mean that rises to
LOSS_RISE_FACTOR times the first report's is worth a warning, once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import statistics
import time
from collections.abc import Callable, Iterator, Sequence

from ..base.text import Message
from ..events import outcome as run_outcome
from ..events.events import LogMessage, MemorySample, RankSample, StepPhases, StepsReported
from ..memory.probe import MemoryProbe
from .loop_state import LoopState
from .loss_transfer import LossesInFlight

BREAKDOWN_PERIOD_S = 1.0  # a sampled step costs ~1.5 ms on a CPU (hooks, counters): at most one a second
LOSS_RISE_FACTOR = 3.0  # a report whose mean loss is this many times the first one's is worth a warning


def report(
    loop: LoopState, batch_size: int, probe: MemoryProbe, phases: StepPhases | None = None
) -> tuple[StepsReported, LossesInFlight]:
    """The report of the steps since the previous one (a watched run's), and its losses on their way to the host:
    the report is complete once they arrive (`with_losses`)."""
    losses, now = send_losses(loop)
    return steps_reported(loop, losses.count, now, batch_size, probe.sample(), phases=phases), losses


def send_losses(loop: LoopState) -> tuple[LossesInFlight, float]:
    """The buffered losses sent to the host in one copy that nothing waits for (no sync) and when they were sent;
    decides whether the next step samples the memory breakdown."""
    losses = LossesInFlight(loop.pending)
    loop.pending = []
    now = time.perf_counter()
    loop.sample_next = now - loop.last_breakdown >= BREAKDOWN_PERIOD_S
    return losses, now


def steps_reported(
    loop: LoopState,
    count: int,
    now: float,
    batch_size: int,
    memory: MemorySample,
    world: int = 1,
    ranks: tuple[RankSample, ...] = (),
    phases: StepPhases | None = None,
) -> StepsReported:
    """The report at `now` of the `count` steps since the previous one, without their losses (`with_losses` adds
    them when they reach the host): every run's, one process's or a data-parallel world's (`world` processes, each
    training `batch_size` samples a step)."""
    first = loop.step - count + 1
    rate = loop.record_report(now) * world  # ranks step together: the total is this one's times the world
    if phases is not None:
        loop.report_phases.append(phases)
    return StepsReported(
        loop.step,
        loop.epoch,
        first,
        (),
        loop.samples * world,
        rate,
        now - loop.t0,
        loop.eta_s(batch_size),
        batch_size * world,
        memory,
        loop.total_steps,
        ranks,
        phases,
    )


def with_losses(loop: LoopState, report: StepsReported, losses: list[float]) -> StepsReported:
    """`report` with its steps' losses, which have reached the host; they count towards the epoch's mean."""
    loop.epoch_losses.extend(losses)
    return dataclasses.replace(report, losses=tuple(losses))


def arrived_reports(loop: LoopState, wait: bool) -> Iterator[StepsReported]:
    """The reports whose losses have reached the host, oldest first, with them (`wait`: every report, waiting)."""
    for arrived in loop.in_flight.arrived(wait):
        yield with_losses(loop, arrived.report, arrived.losses)


def emit_last_reports(loop: LoopState, status: str, emit: Callable[[object], None]) -> None:
    """A run's reports still on their way when it ended early: emitted (and counted in its summary), unless the
    run diverged: theirs are steps after the nan/inf."""
    if status != "diverged":
        with contextlib.suppress(Exception):  # a device failing now (the cause of the ending) loses them, no more
            for report in arrived_reports(loop, wait=True):
                emit(report)
                with contextlib.suppress(run_outcome.Diverged):
                    check_losses(loop, report.first_step, report.losses)
    loop.in_flight.clear()


def check_losses(loop: LoopState, first: int, losses: Sequence[float]) -> LogMessage | None:
    """A report's losses (steps `first` onwards): raises Diverged at the first NaN/inf; the warning to log the
    first time they have risen."""
    loop.report_means.append(statistics.fmean(losses))
    if losses:  # the summary's first and last loss are steps' own (a mean would hide the nan a run ended in)
        if loop.first_loss is None:
            loop.first_loss = losses[0]
        loop.last_loss = losses[-1]
    run_outcome.check_finite(first, list(losses))  # raises Diverged at the first NaN/inf
    rise = loop.loss_rise(LOSS_RISE_FACTOR)
    if rise is None:  # finite values, so not diverged, but not learning: a bare `completed` would hide it
        return None
    return LogMessage(
        "warning",
        Message(
            "the loss rose from {first:.4g} to {latest:.4g} by step {step}: the run is "
            "not converging; try a lower learning rate",
            first=rise[0],
            latest=rise[1],
            step=loop.step,
        ),
    )
