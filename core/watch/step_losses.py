"""The losses a watched loop's step() is given: queued on their device (no sync) until a report sends them to
the host in one transfer that nothing waits for (gpu_train_monitor.engine.loss_transfer), and what they say once
there: a step whose loss was not given
(stored as no value, not taken for a divergence) and the first loss that became nan or inf (the run ends `diverged`)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import torch

from ..base.text import Message
from ..engine import report as loss_report
from ..engine.loop_state import LoopState
from ..events.events import LogMessage, StepPhases, StepsReported
from ..memory.probe import MemoryProbe


class StepLosses:
    """A watched run's losses between two reports, and the step where its loss first became nan or inf."""

    def __init__(self) -> None:
        self.unknown: set[int] = set()  # steps since the last report whose loss step() was not given
        self.nonfinite_step: int | None = None

    def add(self, loop: LoopState, loss: torch.Tensor | float | None, device: torch.device) -> None:
        """Queue the loss of the next step (run.step + 1) on its device: no sync."""
        if isinstance(loss, torch.Tensor):
            value = loss.detach()
            if value.numel() != 1:
                value = value.float().mean()
            loop.pending.append(value.reshape(()))  # stays on the device: no sync
        else:
            if loss is None:  # unknown, not diverged: stored as no value
                self.unknown.add(loop.step + 1)
            value = math.nan if loss is None else float(loss)
            # on the device of the others (stacked with them at the report); a fill, not a copy: no sync
            loop.pending.append(torch.full((), value, device=loop.pending[0].device if loop.pending else device))

    def report(
        self,
        loop: LoopState,
        batch_size: int,
        probe: MemoryProbe,
        total_steps: int | None,
        emit: Callable[[Any], None],
        phases: StepPhases | None = None,
        wait: bool = True,
    ) -> None:
        """Send the queued losses to the host as one report (no sync) with the steps' `phases` when they were
        timed; then emit every report whose losses arrived (`wait`: every one, waiting for the copies)."""
        if loop.pending:
            report, losses = loss_report.report(loop, batch_size, probe, phases)
            if not total_steps:  # unknown length: no ETA
                report = dataclasses.replace(report, eta_s=None, total_steps=0)
            unknown, self.unknown = self.unknown, set()
            loop.in_flight.add(report, losses, unknown)  # the steps whose loss was not given travel with it
        for arrived in loop.in_flight.arrived(wait):
            self._emit(loop, loss_report.with_losses(loop, arrived.report, arrived.losses), arrived.extra, emit)

    def _emit(self, loop: LoopState, report: StepsReported, unknown: set[int], emit: Callable[[Any], None]) -> None:
        """A report whose losses arrived, and a warning at the first loss that became nan or inf."""
        loop.epoch_losses.clear()  # a watched run has no epochs: nothing to average them over
        known = [value for step, value in enumerate(report.losses, report.first_step) if step not in unknown]
        emit(report)
        if known:
            loop.report_means.append(sum(known) / len(known))
            if loop.first_loss is None:
                loop.first_loss = known[0]  # the summary's first and last loss: steps' own, nan included
            loop.last_loss = known[-1]
        if self.nonfinite_step is None:
            for offset, value in enumerate(report.losses):
                if not math.isfinite(value) and report.first_step + offset not in unknown:
                    self.nonfinite_step = report.first_step + offset
                    emit(LogMessage("warning", self.diverged_text()))
                    break

    def diverged_text(self) -> str:
        return Message("the loss became nan or inf at step {step}", step=self.nonfinite_step)
