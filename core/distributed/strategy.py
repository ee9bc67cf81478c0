"""One rank of a data-parallel run: the ordinary training loop (gpu_train_monitor.engine.session) with the
`DataParallel` strategy, which owns what differs: the model in DistributedDataParallel, the data split over the
ranks (gpu_train_monitor.data.sharding), each report exchanged and agreed between them, rank 0 recording, and
stopping together.

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
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel

from ..base.readonly import ReadOnlyDict
from ..base.text import Message
from ..data.sharding import Shard
from ..engine import oom_recovery
from ..engine.loss_transfer import LossesRead
from ..engine.report import BREAKDOWN_PERIOD_S
from ..engine.session import TrainingSession
from ..engine.strategy import Gathered, Requests
from ..events import outcome as run_outcome
from ..events.events import MemoryBreakdown, MemorySample, Observer, RankSample, RunFinished
from . import group as distributed
from .gather_row import GatherRow
from .group import RankContext
from .sync_batchnorm import synchronise_batchnorm

if TYPE_CHECKING:
    from ..config.run_config import RunConfig
    from ..engine.loop_state import LoopState
    from ..engine.recipe import RunParts
    from ..events.controls import RunControls
    from ..events.events import OutOfMemory
    from ..memory.probe import MemoryProbe

PAUSED_POLL_S = 0.2  # paused ranks agree this often on whether to go on (a collective, not a busy wait)
MAX_STEPS_PER_REPORT = 10_000


def data_parallel_session(
    config: RunConfig, context: RankContext, observers: Iterable[Observer] = (), run_uid: str | None = None
) -> TrainingSession:
    """A rank's session: the training loop with this rank's strategy; only rank 0 gets observers. `run_uid`: the
    launcher's name for the run, the same on every rank."""
    return TrainingSession(config, observers, run_uid=run_uid, strategy=DataParallel(context))


class DataParallel:
    """What one rank of `context`'s world does differently from a run alone."""

    def __init__(self, context: RankContext) -> None:
        self.context = context
        self.shard = Shard(context.rank, context.world_size)
        self.every = 1  # steps per report, agreed; the first report (warm-up) comes after one step
        self.rank_devices: tuple[str, ...] = ()
        self._device: torch.device | None = None
        self._since_report = 0  # steps since the previous report
        self._agreed = Requests()  # what the last report decided for the next step boundary
        self._measured: MemoryBreakdown | None = None  # this rank's breakdown since the last report
        self._memory_template: MemorySample | None = None  # this rank's sample at the last report: every rank's
        # sample there takes its time and allocator flag
        self._rank_rates: dict[int, list[float]] = {}
        self._rank_peaks: dict[int, list[int]] = {}  # rank -> [peak allocated, peak reserved, peak rss]

    # ---- building the run ----------------------------------------------------------------------------
    def device(self, config: RunConfig) -> torch.device:
        device = distributed.rank_device(config.device, self.context)
        if device.type == "cuda":  # before any collective: NCCL places their tensors on the current device
            torch.cuda.set_device(device)
        distributed.start_group(self.context, device)
        self.rank_devices = tuple(distributed.gather_strings(str(device)))
        self._device = device
        return device

    def prepare(self, parts: RunParts, config: RunConfig, device: torch.device, generator: torch.Generator) -> None:
        """The model wrapped in DistributedDataParallel; each rank's own random draws."""
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

    def started_extras(self) -> dict[str, object]:
        return {"world_size": self.context.world_size, "rank_devices": self.rank_devices}

    def config_as_run(self, values: dict[str, object], built: bool) -> dict[str, object]:
        if built:  # the source serves one rank's share: the run's batch is the world's
            values["batch_size"] = int(values["batch_size"]) * self.context.world_size  # type: ignore[call-overload]
        values["nproc"] = self.context.world_size
        return values

    # ---- at step boundaries --------------------------------------------------------------------------
    def requests(self, controls: RunControls) -> Requests:
        """What the ranks agreed at the last report (never a request only this rank saw)."""
        agreed, self._agreed = self._agreed, Requests()
        return agreed

    def wait_while_paused(
        self, controls: RunControls, apply: Callable[[Requests], None], loop: LoopState, probe: MemoryProbe
    ) -> bool:
        """Wait, paused, agreeing with the others every PAUSED_POLL_S; True when a stop ended the pause."""
        while True:
            time.sleep(PAUSED_POLL_S)
            rows, _ = self._exchange(controls, loop, probe, [])
            if any(row.stop for row in rows):
                return True
            if any(row.clear for row in rows):
                apply(Requests(clear=True))
            if not rows[0].pause:
                return False

    def report_due(self, loop: LoopState, interval_s: float) -> bool:
        self._since_report += 1
        return self._since_report >= self.every

    # ---- reports -------------------------------------------------------------------------------------
    def gather(self, loop: LoopState, probe: MemoryProbe, controls: RunControls, config: RunConfig) -> Gathered:
        """Every rank's losses and row in one all_gather; every rank agrees on what happens next from them."""
        now = time.perf_counter()
        seconds, samples = now - loop.last_report, loop.samples - loop.last_report_samples
        pending, loop.pending = loop.pending, []
        rows, rank_losses = self._exchange(controls, loop, probe, pending, seconds, samples)
        self._since_report = 0
        # each step's loss over the whole global batch. Sync point, one per report: the ranks agree on what happens
        # next (stop, pause, a rank's out of memory) from the rows they exchanged, so a data-parallel report is read
        # at once rather than a report later as a one-process run's is (gpu_train_monitor.engine.loss_transfer)
        losses = rank_losses.mean(dim=0).tolist()
        ranks = tuple(self._rank_sample(rank, row) for rank, row in enumerate(rows))
        if loop.warmup_steps and len(loop.rates) > 0:  # after the warm-up report, as the run's own rate
            for sample in ranks:
                self._rank_rates.setdefault(sample.rank, []).append(sample.samples_per_s)
        for row in rows:  # every rank's breakdown measured since the last report (all sample the same step)
            if row.breakdown is not None:
                controls.emit(row.breakdown)
        self._agree(rows, len(losses), loop, config.report_interval)
        return Gathered(LossesRead(losses), now, self.context.world_size, ranks)

    def _exchange(
        self,
        controls: RunControls,
        loop: LoopState,
        probe: MemoryProbe,
        losses: list[torch.Tensor],
        seconds: float = 0.0,
        samples: int = 0,
    ) -> tuple[list[GatherRow], torch.Tensor]:
        """The report's all_gather: this rank's row and losses in; every rank's row, by rank, and their losses
        (world, k) out."""
        assert self._device is not None
        memory = probe.sample()
        breakdown, self._measured = self._measured, None
        since = time.perf_counter() - loop.last_breakdown if loop.last_breakdown > 0 else 1e9
        row = GatherRow(
            seconds,
            samples,
            memory.byte_counts(),
            controls.stop_requested,
            controls.pause_requested,
            controls.take_cache_clear(),
            since,
            breakdown,
        )
        where = distributed.collective_device(self._device)
        values = torch.tensor(row.pack(), dtype=torch.float64, device=where)
        if losses:
            values = torch.cat([values, torch.stack(losses).to(where, torch.float64)])
        gathered = distributed.gather_rows(values)
        self._memory_template = memory
        rows = [GatherRow.unpack(numbers, rank) for rank, numbers in enumerate(gathered[:, : GatherRow.SIZE].tolist())]
        return rows, gathered[:, GatherRow.SIZE :]

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

    def _agree(self, rows: list[GatherRow], steps: int, loop: LoopState, interval_s: float) -> None:
        """The decisions every rank takes from the same gathered rows, so they all take them alike."""
        self._agreed = Requests(
            clear=any(row.clear for row in rows), pause=rows[0].pause, stop=any(row.stop for row in rows)
        )
        loop.sample_next = max(row.since_breakdown for row in rows) >= BREAKDOWN_PERIOD_S
        slowest = max(row.seconds / max(steps, 1) for row in rows)  # seconds per step
        per_report = interval_s / slowest if slowest > 0 else 1.0
        self.every = int(min(max(round(per_report), 1), MAX_STEPS_PER_REPORT))

    def breakdown_measured(self, breakdown: MemoryBreakdown, emit: Callable[[object], None]) -> None:
        """This rank's sampled step goes into the next report; rank 0 emits every rank's there."""
        self._measured = breakdown

    # ---- failures and the end ------------------------------------------------------------------------
    def out_of_memory(self, event: OutOfMemory, loop: LoopState, device: torch.device) -> None:
        """Out of memory on this rank: the others are waiting in DDP's gradient reduction, so there is no
        agreeing on a smaller batch; this rank ends (the launcher then stops the others and names it)."""
        raise run_outcome.OutOfMemoryStop(
            Message(
                "rank {rank} ({device}) ran out of memory at step {step}: {problem}",
                rank=self.context.rank,
                device=str(device),
                step=loop.step + 1,
                problem=oom_recovery.stop_message(event, "stop"),
            )
        )

    def finished(self, finished: RunFinished) -> RunFinished:
        """The summary of the whole world: its samples, speed and every rank's peaks."""
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
