"""What a run does differently when it is one process of several: the strategy a `TrainingSession` is given.

The loop (gpu_train_monitor.engine.session) is the same for every run; a strategy owns only what differs. The
one-process run's, `OneProcess`, is here; a data-parallel rank's (the model wrapped in DistributedDataParallel,
each report exchanged and agreed between the ranks, rank 0 recording, stopping together) is
gpu_train_monitor.distributed.strategy's `DataParallel`. Each method is called at one place in the loop:

- `device`, `shard`, `prepare`, `started_extras`, `config_as_run`: building the run (session_build);
- `requests`: at each step boundary, what the run was asked to do (stop, pause, clear the cache, save);
- `wait_while_paused`: while paused, until resumed (False) or stopped (True);
- `report_due`, `gather`: when a report is made and whose losses it carries;
- `breakdown_measured`: a sampled step's memory breakdown (emitted now, or carried by the next report);
- `out_of_memory`: after an out-of-memory error is reported (a rank ends there: the others wait in a collective);
- `finished`: the run's last event (a data-parallel run's summary is the world's).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import torch

from ..data.sharding import ONE, Shard
from ..device.devices import resolve_device
from .loss_transfer import Losses
from .report import send_losses

if TYPE_CHECKING:
    from ..config.run_config import RunConfig
    from ..events.controls import RunControls
    from ..events.events import MemoryBreakdown, OutOfMemory, RankSample, RunFinished
    from ..memory.probe import MemoryProbe
    from .loop_state import LoopState
    from .recipe import RunParts


@dataclass
class Requests:
    """What the run was asked to do at a step boundary, in the order the loop does it."""

    clear: bool = False
    checkpoints: list[str | None] = field(default_factory=list)  # None: the run's own checkpoint folder
    snapshots: list[str] = field(default_factory=list)
    pause: bool = False
    stop: bool = False


@dataclass(frozen=True)
class Gathered:
    """A report's losses (one per step since the last report: on their way to the host, or there), sent at `now`;
    `world` processes trained them (each its share of the batch), `ranks` their own samples (a data-parallel
    run's)."""

    losses: Losses
    now: float
    world: int = 1
    ranks: tuple[RankSample, ...] = ()


class Strategy(Protocol):
    shard: Shard  # the share of the data this process trains on

    def device(self, config: RunConfig) -> torch.device: ...

    def prepare(self, parts: RunParts, config: RunConfig, device: torch.device, generator: torch.Generator) -> None: ...

    def started_extras(self) -> dict[str, object]: ...

    def config_as_run(self, values: dict[str, object], built: bool) -> dict[str, object]: ...

    def requests(self, controls: RunControls) -> Requests: ...

    def wait_while_paused(
        self, controls: RunControls, apply: Callable[[Requests], None], loop: LoopState, probe: MemoryProbe
    ) -> bool: ...

    def report_due(self, loop: LoopState, interval_s: float) -> bool: ...

    def gather(self, loop: LoopState, probe: MemoryProbe, controls: RunControls, config: RunConfig) -> Gathered: ...

    def breakdown_measured(self, breakdown: MemoryBreakdown, emit: Callable[[object], None]) -> None: ...

    def out_of_memory(self, event: OutOfMemory, loop: LoopState, device: torch.device) -> None: ...

    def finished(self, finished: RunFinished) -> RunFinished: ...


class OneProcess:
    """A run in this process alone: its requests are its own, it reports on the clock."""

    shard: Shard = ONE
    PAUSED_POLL_S = 0.05  # a paused run answers cache clears and checkpoints this often

    def device(self, config: RunConfig) -> torch.device:
        return resolve_device(config.device)

    def prepare(self, parts: RunParts, config: RunConfig, device: torch.device, generator: torch.Generator) -> None:
        """Nothing to wrap."""

    def started_extras(self) -> dict[str, object]:
        return {}

    def config_as_run(self, values: dict[str, object], built: bool) -> dict[str, object]:
        return values

    def requests(self, controls: RunControls) -> Requests:
        if not controls.take_asked():
            return Requests()  # the common step: one attribute read, not five queues and flags
        return Requests(
            controls.take_cache_clear(),
            controls.take_checkpoint_requests(),
            controls.take_snapshot_paths(),
            controls.pause_requested,
            controls.stop_requested,
        )

    def wait_while_paused(
        self, controls: RunControls, apply: Callable[[Requests], None], loop: LoopState, probe: MemoryProbe
    ) -> bool:
        """Until resumed, answering cache clears and checkpoints meanwhile; True when a stop ended the pause."""
        while not controls.wait_for_resume(self.PAUSED_POLL_S):
            apply(Requests(controls.take_cache_clear(), controls.take_checkpoint_requests()))
        return controls.stop_requested

    def report_due(self, loop: LoopState, interval_s: float) -> bool:
        return time.perf_counter() - loop.last_report >= interval_s

    def gather(self, loop: LoopState, probe: MemoryProbe, controls: RunControls, config: RunConfig) -> Gathered:
        """The buffered losses sent to the host in one copy that nothing waits for (no sync)."""
        return Gathered(*send_losses(loop))

    def breakdown_measured(self, breakdown: MemoryBreakdown, emit: Callable[[object], None]) -> None:
        emit(breakdown)

    def out_of_memory(self, event: OutOfMemory, loop: LoopState, device: torch.device) -> None:
        """The run decides (gpu_train_monitor.engine.oom_recovery): stop, or go on with half the batch."""

    def finished(self, finished: RunFinished) -> RunFinished:
        return finished
