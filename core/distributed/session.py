"""One rank of a data-parallel run: the ordinary `TrainingSession` loop, with the model in
DistributedDataParallel, the data split over the ranks (gpu_train_monitor.data.sharding) and the reports agreed between
them.

What a rank must never do is wait in a collective the others are not in. So the ranks act only on what they
agreed at a report: reports come every `every` steps on every rank (no clock decides), and one all_gather
per report carries each rank's losses, throughput, memory, breakdown and the requests it received (stop,
pause, clear the cache). After it every rank knows the same things and takes the same decisions at the same
step: stop (any rank was asked: a Ctrl+C reaches them all, a signal to rank 0 is enough), pause (rank 0's
say), clear the cache (any), sample a breakdown, and how many steps until the next report (sized from the
slowest rank's step time to keep reports `report_interval` apart). Losses are averaged over the ranks per
step there: the loss of the whole global batch. Validation is summed over the ranks once per epoch.

Rank 0 alone has observers (the progress bar, the run store): its events describe the whole run, with
every rank's sample in `StepsReported.ranks`. A rank that fails (out of memory, an error) ends its own
process with the reason; the launcher names it (gpu_train_monitor.distributed.launcher).
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Iterable
from typing import Any

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel

from ..base.readonly import ReadOnlyDict
from ..base.text import Message
from ..config.run_config import RunConfig
from ..data.batches import BatchEpoch
from ..data.sharding import Shard
from ..engine import oom_recovery
from ..engine.recipe import RunParts, build_run
from ..engine.report import BREAKDOWN_PERIOD_S
from ..engine.session import TrainingSession
from ..memory.probe import clear_cache
from ..run import outcome as run_outcome
from ..run.events import (
    CacheCleared,
    MemoryBreakdown,
    MemorySample,
    Observer,
    RankSample,
    RunFinished,
    RunPaused,
    RunResumed,
    StepsReported,
)
from . import group as distributed
from .gather_row import GatherRow
from .group import RankContext
from .sync_batchnorm import synchronise_batchnorm

PAUSED_POLL_S = 0.2  # paused ranks agree this often on whether to go on (a collective, not a busy wait)
MAX_STEPS_PER_REPORT = 10_000


class DistributedSession(TrainingSession):
    """A rank's session. Same controls as `TrainingSession`; only rank 0 gets observers."""

    def __init__(
        self, config: RunConfig, context: RankContext, observers: Iterable[Observer] = (), run_uid: str | None = None
    ) -> None:
        super().__init__(config, observers)
        self.context = context
        if run_uid:
            self.run_uid = run_uid  # the launcher's name for the run: the same on every rank
        self.every = 1  # steps per report, agreed; the first report (warm-up) comes after one step
        self.rank_devices: tuple[str, ...] = ()
        self._since_report = 0  # steps since the previous report
        self._agreed: dict[str, bool] = {}  # what the last report decided for the next step boundary
        self._measured: MemoryBreakdown | None = None  # this rank's breakdown since the last report
        self._memory_template: MemorySample | None = None  # this rank's sample at the last report: every rank's
        # sample there takes its time and allocator flag
        self._rank_rates: dict[int, list[float]] = {}
        self._rank_peaks: dict[int, list[int]] = {}  # rank -> [peak allocated, peak reserved, peak rss]
        self._rank_samples: tuple[RankSample, ...] = ()

    # ---- build -----------------------------------------------------------------------------------
    def _device(self) -> torch.device:
        device = distributed.rank_device(self.config.device, self.context)
        if device.type == "cuda":  # before any collective: NCCL places their tensors on the current device
            torch.cuda.set_device(device)
        distributed.start_group(self.context, device)
        self.rank_devices = tuple(distributed.gather_strings(str(device)))
        return device

    def _build_parts(self, config: RunConfig, device: torch.device, generator: torch.Generator) -> RunParts:
        assert self.probe is not None
        parts = build_run(
            config, device, self.probe.free_bytes(), generator, Shard(self.context.rank, self.context.world_size)
        )
        trainer = parts.trainer
        if config.sync_bn:
            trainer.model = synchronise_batchnorm(trainer.model, device)
        # gradient_as_bucket_view: DDP's buckets are the gradients, not a second copy of them
        trainer.parallel = DistributedDataParallel(
            trainer.model, device_ids=[device.index] if device.type == "cuda" else None, gradient_as_bucket_view=True
        )
        if trainer.compiled is not None:
            trainer.compiled = torch.compile(trainer.parallel)
        trainer.reduce_sum = distributed.sum_over_ranks
        rank_seed = config.seed + self.context.rank
        torch.manual_seed(rank_seed)  # DDP gave every rank rank 0's weights; dropout and the like now differ
        if parts.placement.name == "resident":  # each rank shuffles and crops its own shard: its own draws (the
            generator.manual_seed(rank_seed)  # stream placement shares them: its ranks cut one global batch)
            parts.source.preprocess.host_rng = np.random.default_rng(rank_seed)  # type: ignore[attr-defined]
        return parts

    def _started_extras(self) -> dict[str, object]:
        return {"world_size": self.context.world_size, "rank_devices": self.rank_devices}

    def _config_as_run(self) -> ReadOnlyDict:
        values = dict(super()._config_as_run())
        if self._parts is not None:  # the source serves one rank's share: the run's batch is the world's
            values["batch_size"] = int(values["batch_size"]) * self.context.world_size
        values["nproc"] = self.context.world_size
        return ReadOnlyDict(values)

    # ---- the loop --------------------------------------------------------------------------------
    def _report_due(self) -> bool:
        self._since_report += 1
        return self._since_report >= self.every

    def _at_step_boundary(self, batches: BatchEpoch) -> None:
        """Act on what the ranks agreed at the last report (never on a request only this rank saw)."""
        agreed, self._agreed = self._agreed, {}
        if agreed.get("clear"):
            self._apply_cache_clear()
        if agreed.get("pause"):
            self.emit(RunPaused(self._state.step))
            if not self._paused():
                self.emit(RunResumed(self._state.step))
            self._state.reset_rate_clock()
            agreed["stop"] = agreed.get("stop") or self._agreed.pop("stop", False)
        if agreed.get("stop"):
            raise run_outcome.Stopped

    def _paused(self) -> bool:
        """Wait, paused, agreeing with the others every PAUSED_POLL_S; True when a stop ended the pause."""
        while True:
            time.sleep(PAUSED_POLL_S)
            rows, _ = self._exchange([])
            if any(row.stop for row in rows):
                self._agreed["stop"] = True
                return True
            if any(row.clear for row in rows):
                self._apply_cache_clear()
            if not rows[0].pause:
                return False

    def _breakdown_measured(self, breakdown: MemoryBreakdown) -> None:
        """This rank's sampled step goes into the next report; rank 0 emits every rank's there."""
        self._measured = breakdown

    # ---- report ----------------------------------------------------------------------------------
    def _exchange(
        self, losses: list[torch.Tensor], seconds: float = 0.0, samples: int = 0
    ) -> tuple[list[GatherRow], torch.Tensor]:
        """The report's all_gather: this rank's row and losses in; every rank's row, by rank, and their losses
        (world, k) out."""
        assert self.probe is not None and self.device is not None
        memory = self.probe.sample()
        breakdown, self._measured = self._measured, None
        since = time.perf_counter() - self._state.last_breakdown if self._state.last_breakdown > 0 else 1e9
        row = GatherRow(
            seconds,
            samples,
            memory.byte_counts(),
            self.stop_requested,
            self.pause_requested,
            self.take_cache_clear(),
            since,
            breakdown,
        )
        where = distributed.collective_device(self.device)
        values = torch.tensor(row.pack(), dtype=torch.float64, device=where)
        if losses:
            values = torch.cat([values, torch.stack(losses).to(where, torch.float64)])
        gathered = distributed.gather_rows(values)
        self._memory_template = memory
        rows = [GatherRow.unpack(numbers, rank) for rank, numbers in enumerate(gathered[:, : GatherRow.SIZE].tolist())]
        return rows, gathered[:, GatherRow.SIZE :]

    def _report(self) -> None:
        """Gather every rank's report, emit the whole run's, and agree on what happens next."""
        run = self._state
        assert self._parts is not None and self.probe is not None
        now = time.perf_counter()
        seconds, samples = now - run.last_report, run.samples - run.last_report_samples
        pending, run.pending = run.pending, []
        rows, rank_losses = self._exchange(pending, seconds, samples)
        self.loss_fetches += 1
        self._since_report = 0
        world = self.context.world_size
        losses = rank_losses.mean(dim=0).tolist()  # each step's loss over the whole global batch
        first = run.step - len(losses) + 1
        rate = run.record_report(now) * world  # ranks step together: the total is this rank's times the world
        run.epoch_losses.extend(losses)
        self._rank_samples = tuple(self._rank_sample(rank, row) for rank, row in enumerate(rows))
        if run.warmup_steps and len(run.rates) > 0:  # after the warm-up report, as the run's own rate
            for sample in self._rank_samples:
                self._rank_rates.setdefault(sample.rank, []).append(sample.samples_per_s)
        for row in rows:  # every rank's breakdown measured since the last report (all sample the same step)
            if row.breakdown is not None:
                self.emit(row.breakdown)
        batch = self._parts.source.batch_size
        self.emit(
            StepsReported(
                run.step,
                run.epoch,
                first,
                tuple(losses),
                run.samples * world,
                rate,
                now - run.t0,
                run.eta_s(batch),
                batch * world,
                self.probe.sample(),
                run.total_steps,
                self._rank_samples,
            )
        )
        self._agree(rows, len(losses))
        self._check_losses(first, losses)  # every rank sees the same losses: a divergence ends them all together

    def _rank_sample(self, rank: int, row: GatherRow) -> RankSample:
        """A rank's gathered row as the sample the window plots; its peaks are kept for the summary."""
        template = self._memory_template
        assert template is not None  # the exchange that gathered `row` sampled it
        memory = MemorySample(
            time_s=template.time_s, device=self.rank_devices[rank], has_allocator=template.has_allocator, **row.memory
        )
        peaks = self._rank_peaks.setdefault(rank, [0, 0, 0])
        peaks[:] = [
            max(peaks[0], memory.peak_allocated_bytes),
            max(peaks[1], memory.peak_reserved_bytes),
            max(peaks[2], memory.process_rss_bytes),
        ]
        speed = row.samples / row.seconds if row.seconds > 0 else 0.0
        return RankSample(rank, self.rank_devices[rank], speed, memory)

    def _agree(self, rows: list[GatherRow], steps: int) -> None:
        """The decisions every rank takes from the same gathered rows, so they all take them alike."""
        self._agreed = {
            "stop": any(row.stop for row in rows),
            "pause": rows[0].pause,
            "clear": any(row.clear for row in rows),
        }
        self._state.sample_next = max(row.since_breakdown for row in rows) >= BREAKDOWN_PERIOD_S
        slowest = max(row.seconds / max(steps, 1) for row in rows)  # seconds per step
        steps = self.config.report_interval / slowest if slowest > 0 else 1.0
        self.every = int(min(max(round(steps), 1), MAX_STEPS_PER_REPORT))

    def _apply_cache_clear(self) -> None:
        """Every rank clears its own cache at the same step; rank 0 reports its own numbers."""
        assert self.device is not None and self.probe is not None
        freed = clear_cache(self.device)
        self.emit(CacheCleared(self._state.step, freed, self.probe.sample()))

    # ---- failures and the end ----------------------------------------------------------------------
    def _recover_from_oom(self, message: str, phase: str, epoch: BatchEpoch | None) -> None:
        """Out of memory on this rank: the others are waiting in DDP's gradient reduction, so there is no
        agreeing on a smaller batch; this rank ends (the launcher then stops the others and names it)."""
        assert self.device is not None and self.probe is not None and self._parts is not None
        event = oom_recovery.recover(message, phase, self.config, self._state, self.device, self.probe, self._parts)
        self.emit(event)
        raise run_outcome.OutOfMemoryStop(
            Message(
                "rank {rank} ({device}) ran out of memory at step {step}: {problem}",
                rank=self.context.rank,
                device=str(self.device),
                step=self._state.step + 1,
                problem=oom_recovery.stop_message(event, "stop"),
            )
        )

    def _finish(self, outcome: run_outcome.Outcome) -> RunFinished:
        finished = super()._finish(outcome)
        summary = finished.summary
        world = self.context.world_size
        ranks = tuple(
            ReadOnlyDict(
                {
                    "rank": rank,
                    "device": self.rank_devices[rank] if rank < len(self.rank_devices) else "",
                    "samples_per_s": statistics.median(self._rank_rates[rank]) if self._rank_rates.get(rank) else None,
                    "peak_allocated_bytes": peaks[0],
                    "peak_reserved_bytes": peaks[1],
                    "peak_rss_bytes": peaks[2],
                }
            )
            for rank, peaks in sorted(self._rank_peaks.items())
        )
        spread = summary.samples_per_s_spread
        changes: dict[str, Any] = {
            "samples": summary.samples * world,
            "world_size": world,
            "ranks": ranks,
            "samples_per_s": None if summary.samples_per_s is None else summary.samples_per_s * world,
            "samples_per_s_spread": None if spread is None else (spread[0] * world, spread[1] * world),
        }
        distributed.end_group()
        return dataclasses.replace(finished, summary=dataclasses.replace(summary, **changes))
