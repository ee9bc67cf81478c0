"""What the run store reads back: frozen rows of plain values, safe to hand to another thread (the window
reads in a worker and draws in its own)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config.sequences import Throughput
from ..events.events import STEP_PHASES, StepPhases

# the `reports` columns of a report's step phases (schema version 6): each phase's median per step in whole
# microseconds, in STEP_PHASES order, then the median step's whole time
PHASE_COLUMNS: tuple[str, ...] = (*(f"{phase}_us" for phase in STEP_PHASES), "step_us")


def phase_values(phases: StepPhases | None) -> dict[str, int | None]:
    """A report's `PHASE_COLUMNS` with their values, as the store keeps them: NULL each when its steps were not
    timed. Whole microseconds: a host clock's phase medians mean nothing finer."""
    values = (None,) * len(PHASE_COLUMNS) if phases is None else (*phases.seconds, phases.step_s)
    return {name: None if s is None else round(s * 1e6) for name, s in zip(PHASE_COLUMNS, values, strict=True)}


@dataclass(frozen=True)
class RunRow:
    """One run as the history lists it."""

    id: int
    uid: str
    name: str
    note: str
    label: str
    status: str  # running | completed | stopped | diverged | oom | failed | interrupted
    live: bool  # running, and its process is alive: the window follows it
    started_at: float  # Unix time
    finished_at: float | None
    heartbeat_at: float
    message: str
    model: str
    dataset: str
    device: str
    device_name: str
    placement: str
    batch_size: int
    steps: int
    total_steps: int
    samples_per_s: float | None
    loss_last: float | None
    val_accuracy: float | None
    peak_allocated_bytes: int
    peak_reserved_bytes: int
    pid: int
    host: str
    resumes: int
    world_size: int  # processes that trained it together (data-parallel); 1: an ordinary run
    # '' for a run recorded on this machine; else the machine a mirror copied it from, as the user named it (an ssh
    # alias, user@host or user@host:port); `host` is the host name it trained on
    origin: str = ""
    # how its throughput reads, from its config (gpu_train_monitor.config.sequences.throughput): a text run's is
    # tokens/s, samples_per_s x its seq_len
    throughput_unit: str = "images/s"
    tokens_per_sample: int = 1

    @property
    def throughput(self) -> Throughput:
        short = {"images/s": "img/s", "tokens/s": "tok/s"}.get(self.throughput_unit, self.throughput_unit)
        return Throughput(self.throughput_unit, short, self.tokens_per_sample)

    @property
    def speed(self) -> float | None:
        """The median throughput in the run's unit (`throughput_unit`)."""
        return self.throughput.of(self.samples_per_s)

    @property
    def title(self) -> str:
        return self.name or f"#{self.id} {self.model} on {self.device}" + (f" ({self.label})" if self.label else "")

    @property
    def devices(self) -> str:
        """The device, with the world size of a data-parallel run: 'cuda:0', 'cpu x2', 'cuda:0 x4' (rank 0's
        device: the others are in its rank reports)."""
        return self.device if self.world_size <= 1 else f"{self.device} x{self.world_size}"


@dataclass(frozen=True)
class StepSeries:
    """A run's per-step losses in step order (NaN where the loss was not finite)."""

    steps: tuple[int, ...]
    epochs: tuple[int, ...]
    losses: tuple[float, ...]


@dataclass(frozen=True)
class ReportRow:
    """One report: throughput, the memory sample taken with it, and where its steps spent their time (the
    `PHASE_COLUMNS`: None for a report whose steps were not timed, a watched run's or one recorded before them)."""

    step: int
    at: float
    elapsed_s: float
    samples: int
    samples_per_s: float
    batch_size: int
    total_steps: int
    eta_s: float | None
    allocated_bytes: int
    reserved_bytes: int
    peak_allocated_bytes: int
    peak_reserved_bytes: int
    capacity_bytes: int
    device_used_bytes: int | None
    process_rss_bytes: int
    data_us: int | None = None
    copy_us: int | None = None
    forward_us: int | None = None
    backward_us: int | None = None
    optimizer_us: int | None = None
    recording_us: int | None = None
    step_us: int | None = None

    @property
    def phases(self) -> StepPhases | None:
        """The report's step phases in seconds, as the run reported them (`StepsReported.phases`) to the
        microsecond; None when its steps were not timed."""
        values = [getattr(self, name) for name in PHASE_COLUMNS]
        if any(value is None for value in values):
            return None
        return StepPhases(tuple(value / 1e6 for value in values[:-1]), values[-1] / 1e6)


@dataclass(frozen=True)
class EventRow:
    seq: int
    at: float
    step: int | None
    kind: str
    data: dict[str, Any]


@dataclass(frozen=True)
class RankReportRow:
    """One rank of a data-parallel run at one report: its own throughput and memory sample."""

    step: int  # the report's step
    rank: int
    device: str
    samples_per_s: float | None  # this rank's images/s over the report's steps (None: it was not a number)
    allocated_bytes: int
    reserved_bytes: int
    peak_allocated_bytes: int
    peak_reserved_bytes: int
    capacity_bytes: int
    device_used_bytes: int | None
    process_rss_bytes: int
