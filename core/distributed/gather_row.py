"""One rank's row of a data-parallel report's all_gather (gpu_train_monitor.distributed.strategy): what every rank must
know of every other to take the same decisions at the same step.

`pack()` turns it into `GatherRow.SIZE` float64s (the rank's losses since the previous report follow them in the
gathered row) and `unpack()` reads it back on every rank, so the layout is written once. A value the sample does
not know (None) travels as -1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import ClassVar

from ..events.events import PHASES, SAMPLE_COLUMNS, MemoryBreakdown

# the breakdown's sizes (params, grads, optimizer, batch, activations, dataset), in field order
BREAKDOWN_BYTES = tuple(f.name for f in fields(MemoryBreakdown) if f.name.endswith("_bytes"))
METHODS = ("allocator", "saved-tensors")  # MemoryBreakdown.method, sent as its index
# a breakdown's values: measured (1) or not (0), step, sizes, phase peaks, method
_BREAKDOWN_SIZE = 2 + len(BREAKDOWN_BYTES) + len(PHASES) + 1


@dataclass(frozen=True)
class GatherRow:
    """What one rank says at a report."""

    SIZE: ClassVar[int] = 2 + len(SAMPLE_COLUMNS) + 4 + _BREAKDOWN_SIZE  # floats in a packed row
    seconds: float  # since the previous report
    samples: int  # images this rank trained since then
    memory: dict[str, int | None]  # this rank's memory sample: its `SAMPLE_COLUMNS`
    stop: bool  # this rank was asked to stop
    pause: bool  # ... to pause (rank 0's say counts)
    clear: bool  # ... to clear the cache
    since_breakdown: float  # seconds since this rank last measured a breakdown
    breakdown: MemoryBreakdown | None = None  # the one this rank measured since the previous report

    def pack(self) -> list[float]:
        """The row as `SIZE` floats."""
        return [
            self.seconds,
            float(self.samples),
            *(-1.0 if self.memory[name] is None else float(self.memory[name]) for name in SAMPLE_COLUMNS),
            float(self.stop),
            float(self.pause),
            float(self.clear),
            self.since_breakdown,
            *_pack_breakdown(self.breakdown),
        ]

    @classmethod
    def unpack(cls, values: Sequence[float], rank: int) -> GatherRow:
        """Rank `rank`'s row from its gathered values (the first `SIZE` are the row's)."""
        read = iter(values)
        seconds, samples = next(read), int(next(read))
        memory = {name: None if value < 0 else int(value) for name, value in zip(SAMPLE_COLUMNS, read)}
        stop, pause, clear = bool(next(read)), bool(next(read)), bool(next(read))
        since_breakdown = next(read)
        measured, step = next(read), int(next(read))
        sizes = {name: int(value) for name, value in zip(BREAKDOWN_BYTES, read)}
        peaks = tuple((phase, int(value)) for phase, value in zip(PHASES, read))
        method = METHODS[int(next(read))]
        breakdown = (
            MemoryBreakdown(step=step, **sizes, phase_peaks=peaks, method=method, rank=rank) if measured else None
        )
        return cls(seconds, samples, memory, stop, pause, clear, since_breakdown, breakdown)


def _pack_breakdown(breakdown: MemoryBreakdown | None) -> list[float]:
    if breakdown is None:
        return [0.0] * _BREAKDOWN_SIZE
    peaks = dict(breakdown.phase_peaks)
    return [
        1.0,
        float(breakdown.step),
        *(float(getattr(breakdown, name)) for name in BREAKDOWN_BYTES),
        *(float(peaks.get(phase, 0)) for phase in PHASES),
        float(METHODS.index(breakdown.method)),
    ]
