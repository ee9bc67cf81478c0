"""What the run store reads back: frozen rows of plain values, safe to hand to another thread (the window
reads in a worker and draws in its own)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
    """One report: throughput and the memory sample taken with it."""

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
