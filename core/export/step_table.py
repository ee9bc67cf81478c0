"""A recorded run's per-step series as the exports write them: loss, smoothed loss and when each step ended.

The store keeps a loss per step but a time only per report (~10 a second), so a step's time is interpolated
linearly between the reports around it, the run's start counting as step 0 at 0 s (RunStarted is emitted
after set-up, right before the first step). Where that would guess across a gap, it is left unknown (NaN):
a resumed run's steps between its last report before the resume and the first one after it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base.errors import UserError
from ..base.text import Message
from ..store.run_store import ReportRow, RunStore
from .smoothing import DEFAULT_SMOOTHING, EmaState, debiased_ema


@dataclass(frozen=True)
class StepTable:
    """One row per recorded step, in step order (numpy arrays of equal length)."""

    steps: np.ndarray  # int64
    epochs: np.ndarray  # int64
    losses: np.ndarray  # float64; NaN where the loss was not a number
    smoothed: np.ndarray  # the loss plot's EMA at `smoothing`; NaN before the first finite loss
    elapsed_s: np.ndarray  # seconds since the run started; NaN where unknown
    unix_time: np.ndarray  # when the step ended; where unknown, when its loss was reported
    smoothing: float


def check_smoothing(smoothing: float) -> float:
    """The EMA weight, checked: 0 (no smoothing) up to 0.999, as the loss plot allows."""
    if not 0.0 <= smoothing <= 0.999:
        raise UserError(
            Message(
                "smoothing must be between 0 and 0.999 (the loss plot's range), not {smoothing:g}", smoothing=smoothing
            )
        )
    return float(smoothing)


def step_table(
    store: RunStore, run_id: int, smoothing: float = DEFAULT_SMOOTHING, reports: list[ReportRow] | None = None
) -> StepTable:
    """The run's steps with their smoothed loss and time (`reports`: the run's, when the caller has read them)."""
    smoothing = check_smoothing(smoothing)
    row = store.run(run_id)
    series = store.steps(run_id)
    reports = store.reports(run_id) if reports is None else reports
    steps = np.asarray(series.steps, dtype=np.int64)
    losses = np.asarray(series.losses, dtype=np.float64)
    resumed_at = int(store.started(run_id).get("start_step", 0)) if row.resumes else None
    elapsed = step_elapsed(steps, reports, resumed_at)
    report_steps = np.asarray([r.step for r in reports], dtype=np.int64)
    report_times = np.asarray([r.at for r in reports], dtype=np.float64)
    unix_time = row.started_at + elapsed
    unknown = np.isnan(elapsed)
    if unknown.any() and len(reports):  # the report that delivered the step's loss
        delivered = np.minimum(np.searchsorted(report_steps, steps[unknown]), len(reports) - 1)
        unix_time[unknown] = report_times[delivered]
    unix_time[np.isnan(unix_time)] = row.started_at
    return StepTable(
        steps=steps,
        epochs=np.asarray(series.epochs, dtype=np.int64),
        losses=losses,
        smoothed=debiased_ema(losses, smoothing, EmaState()),
        elapsed_s=elapsed,
        unix_time=unix_time,
        smoothing=smoothing,
    )


def step_elapsed(steps: np.ndarray, reports: list[ReportRow], resumed_at: int | None = None) -> np.ndarray:
    """Seconds since the start at each of `steps`, interpolated between reports (NaN where unknown).

    `resumed_at`: the step a resumed run continued from; the steps between the reports around it are
    unknown (their reports were dropped with the steps after the checkpoint, and the pause lasted any time)."""
    elapsed = np.full(len(steps), np.nan)
    if not reports or not len(steps):
        return elapsed
    anchor_steps = np.asarray([0] + [r.step for r in reports], dtype=np.float64)
    anchor_times = np.asarray([0.0] + [r.elapsed_s for r in reports], dtype=np.float64)
    inside = (steps >= anchor_steps[0]) & (steps <= anchor_steps[-1])
    elapsed[inside] = np.interp(steps[inside], anchor_steps, anchor_times)
    if resumed_at is not None:
        before = anchor_steps[anchor_steps <= resumed_at]
        after = anchor_steps[anchor_steps > resumed_at]
        low = before[-1] if len(before) else -np.inf
        high = after[0] if len(after) else np.inf
        elapsed[(steps > low) & (steps < high)] = np.nan
    return elapsed
