"""The state one training run changes as it goes, created in one place, and its summary at the end."""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from ..base.readonly import ReadOnlyDict
from ..config.run_config import RunConfig
from ..data.batches import BatchEpoch, BatchSource
from ..events.events import STEP_PHASES, MemoryBreakdown, StepPhases
from ..events.summary import RunSummary
from ..memory.probe import MemoryProbe
from .loss_transfer import ReportsInFlight


@dataclass
class LoopState:
    """Everything one run changes as it goes, created in one place (its session's `__init__`, gpu_train_monitor.engine.
    session_build); `run()` starts its clock `t0`."""

    t0: float
    step: int = 0
    samples: int = 0
    start_step: int = 0  # steps and images trained before this process (a resumed run starts there)
    start_samples: int = 0
    epoch: int = 0
    total_steps: int = 0  # planned; recomputed when an out-of-memory shrink changes the batch size
    val_batch_size: int = 0
    pending: list[torch.Tensor] = field(default_factory=list)  # losses on the device, not yet reported
    in_flight: ReportsInFlight = field(default_factory=ReportsInFlight)  # reports whose losses are on their way
    epoch_losses: list[float] = field(default_factory=list)
    report_means: list[float] = field(default_factory=list)
    # the first and last steps' own losses: the summary's first and last loss, which report means would blur
    # (a run that ended in nan would read a finite last loss, and a value no step had)
    first_loss: float | None = None
    last_loss: float | None = None
    rates: list[float] = field(default_factory=list)  # images/s per report, after the first (warm-up)
    report_phases: list[StepPhases] = field(default_factory=list)  # where each report's steps spent their time
    warmup_steps: int = 0  # steps in the first report, left out of images/s (start-up, compilation); 0 before it
    compile_s: float | None = None  # the first compiled step's time (torch.compile builds its graphs there)
    last_report: float = 0.0
    last_report_samples: int = 0
    val_accuracy: float | None = None
    sample_next: bool = True  # measure the memory breakdown on the next step
    last_breakdown: float = -math.inf
    breakdown: MemoryBreakdown | None = None  # the sampled step with the largest total
    oom_retries: int = 0
    batch_changes: list[tuple[int, int, int]] = field(default_factory=list)  # (step, from, to)
    skipped_samples: int = 0
    loss_rise_warned: bool = False
    device_name: str = ""

    @property
    def unreported(self) -> bool:
        """Whether steps trained have not reached the record yet (buffered, or their report's losses on the way)."""
        return bool(self.pending) or bool(self.in_flight)

    def record_report(self, now: float) -> float:
        """images/s since the previous report. The first report holds start-up costs (and torch.compile's
        first step): its steps are the warm-up, not a throughput sample."""
        rate = (self.samples - self.last_report_samples) / max(now - self.last_report, 1e-9)
        if self.warmup_steps:
            self.rates.append(rate)
        else:
            self.warmup_steps = self.step - self.start_step
        self.last_report, self.last_report_samples = now, self.samples
        return rate

    def reset_rate_clock(self) -> None:
        """Start the next images/s interval now: time paused, validating or saving is not training time."""
        self.last_report = time.perf_counter()
        self.last_report_samples = self.samples

    def eta_s(self, batch_size: int) -> float | None:
        """Seconds left at the median measured rate, once there is one."""
        if not self.rates or statistics.median(self.rates) <= 0:  # no samples counted (a watched loop's)
            return None
        return max(self.total_steps - self.step, 0) * batch_size / statistics.median(self.rates)

    def loss_rise(self, factor: float) -> tuple[float, float] | None:
        """(first, latest) report means, the first time the latest is `factor` times the first."""
        start, now = self.report_means[0], self.report_means[-1]
        if self.loss_rise_warned or not start > 0 or not now > factor * start:
            return None
        self.loss_rise_warned = True
        return start, now

    def summary(self, status: str, probe: MemoryProbe | None, config: ReadOnlyDict) -> RunSummary:
        """What the run did. `config` is the config as run (the batch size in force at the end)."""
        peak_alloc = peak_res = peak_rss = 0
        if probe is not None:
            sample = probe.sample()
            peak_alloc, peak_res = sample.peak_allocated_bytes, sample.peak_reserved_bytes
            peak_rss = probe.peak_rss_bytes
        wall = time.perf_counter() - self.t0
        trained = self.samples - self.start_samples
        rate = statistics.median(self.rates) if self.rates else (trained / wall if trained else None)
        spread = rate_spread(self.rates) or ((rate, rate) if rate is not None else None)
        changes: Any = tuple(ReadOnlyDict({"step": s, "from": a, "to": b}) for s, a, b in self.batch_changes)
        return RunSummary(
            status=status,
            steps=self.step,
            samples=self.samples,
            wall_s=wall,
            samples_per_s=rate,
            loss_first=self.first_loss if self.first_loss is not None else first_of(self.report_means),
            loss_last=self.last_loss if self.last_loss is not None else last_of(self.report_means),
            val_accuracy=self.val_accuracy,
            device=config["device"],
            device_name=self.device_name,
            peak_allocated_bytes=peak_alloc,
            peak_reserved_bytes=peak_res,
            peak_rss_bytes=peak_rss,
            config=config,
            memory_breakdown=ReadOnlyDict(self.breakdown.to_summary()) if self.breakdown else None,
            batch_size=int(config["batch_size"]),
            batch_size_changes=changes,
            skipped_samples=self.skipped_samples,
            samples_per_s_spread=spread,
            warmup_steps=self.warmup_steps,
            compile_s=self.compile_s,
            start_step=self.start_step,
            **phases_summary(self.report_phases),
        )


def first_of(values: list[float]) -> float | None:
    return values[0] if values else None


def last_of(values: list[float]) -> float | None:
    return values[-1] if values else None


def rate_spread(rates: list[float]) -> tuple[float, float] | None:
    """(10th, 90th percentile) of the per-report images/s: how steady the throughput was, without letting
    one report that a garbage collection or another process interrupted stand for the run."""
    if len(rates) < 2:
        return None
    deciles = statistics.quantiles(rates, n=10, method="inclusive")
    return deciles[0], deciles[-1]


def config_as_run(config: RunConfig, device: torch.device | None, source: BatchSource | None) -> ReadOnlyDict:
    """The config with what the run resolved: device, placement, and the batch size in force."""
    values = config.to_dict()
    values["device"] = str(device) if device is not None else config.device
    if source is not None:
        values["placement"] = source.placement
        values["batch_size"] = source.batch_size
    return ReadOnlyDict(values)


def planned_steps(config: RunConfig, loop: LoopState, source: BatchSource, epoch: BatchEpoch | None) -> int:
    """Steps the run will make: the rest of the current epoch (when one is under way) at the batch size
    in force, the remaining epochs, and max_steps, whichever ends first. A run is `completed` only when
    it made exactly this many."""
    limit = config.epoch_limit
    if limit is None:  # max_steps alone bounds the run
        assert config.max_steps is not None
        return config.max_steps
    if epoch is None:  # between epochs: a fresh run, or one resumed from a checkpoint saved at an epoch's end
        total = loop.step + source.steps_per_epoch() * (limit - loop.epoch)
    else:
        left_now = epoch.remaining_samples() // source.batch_size
        total = loop.step + left_now + source.steps_per_epoch() * (limit - loop.epoch)
    return total if config.max_steps is None else min(total, config.max_steps)


def epoch_exhausted(epoch: BatchEpoch) -> bool:
    """Whether `epoch` has no batch left, found the way a step finds it (a streamed epoch's sampler draws
    once more at its end: a checkpoint saved after that resumes into the same next epoch)."""
    try:
        next(epoch)
    except StopIteration:
        return True
    epoch.give_back()
    return False


@dataclass
class EpochInProgress:
    """An epoch being trained: its batches, the samples its full batches hold, the run's samples before it, and
    whether its data ran out (rather than the run's steps)."""

    batches: BatchEpoch
    planned_samples: int
    samples_before: int
    exhausted: bool = False


def phases_summary(reports: list[StepPhases]) -> dict[str, Any]:
    """The summary's step_phases_s (each phase's median seconds per step over the reports after the warm-up) and
    verdict; nothing when no step was timed."""
    from .step_phases import run_phases, verdict

    phases = run_phases(reports)
    if phases is None:
        return {}
    found = verdict(phases)
    device = phases.device_seconds
    return {
        "step_phases_s": ReadOnlyDict({**phases.as_dict(), "step": phases.step_s}),
        "verdict": found.kind,
        "verdict_text": str(found.advice),
        "device_step_phases_s": None if device is None else ReadOnlyDict(zip(STEP_PHASES, device, strict=True)),
        "gpu_caught_up": phases.caught_up,
    }
