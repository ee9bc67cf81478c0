"""A run's report: the losses buffered on the device fetched in one transfer (the one host sync per report
interval), the `StepsReported` event made from them, and the checks they go through: a NaN/inf ends the run
(`Diverged`), a mean that rises to LOSS_RISE_FACTOR times the first report's is worth a warning, once.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence

import torch

from ..base.text import Message
from ..events import outcome as run_outcome
from ..events.events import LogMessage, MemorySample, RankSample, StepPhases, StepsReported
from ..memory.probe import MemoryProbe
from .loop_state import LoopState

BREAKDOWN_PERIOD_S = 1.0  # a sampled step costs ~1.5 ms on a CPU (hooks, counters): at most one a second
LOSS_RISE_FACTOR = 3.0  # a report whose mean loss is this many times the first one's is worth a warning


def report(loop: LoopState, batch_size: int, probe: MemoryProbe, phases: StepPhases | None = None) -> StepsReported:
    """Fetch the buffered losses and report the steps since the previous report (a watched run's)."""
    losses, now = fetch_losses(loop)
    return steps_reported(loop, losses, now, batch_size, probe.sample(), phases=phases)


def fetch_losses(loop: LoopState) -> tuple[list[float], float]:
    """The buffered losses in one transfer (the sync point: one device-to-host copy) and when they came; decides
    whether the next step samples the memory breakdown."""
    losses = torch.stack(loop.pending).float().cpu().tolist()
    loop.pending = []
    now = time.perf_counter()
    loop.sample_next = now - loop.last_breakdown >= BREAKDOWN_PERIOD_S
    return losses, now


def steps_reported(
    loop: LoopState,
    losses: list[float],
    now: float,
    batch_size: int,
    memory: MemorySample,
    world: int = 1,
    ranks: tuple[RankSample, ...] = (),
    phases: StepPhases | None = None,
) -> StepsReported:
    """The report of the steps since the previous one, whose `losses` were fetched at `now`: every run's, one
    process's or a data-parallel world's (`world` processes, each training `batch_size` samples a step)."""
    first = loop.step - len(losses) + 1
    rate = loop.record_report(now) * world  # ranks step together: the total is this one's times the world
    loop.epoch_losses.extend(losses)
    if phases is not None:
        loop.report_phases.append(phases)
    return StepsReported(
        loop.step,
        loop.epoch,
        first,
        tuple(losses),
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
