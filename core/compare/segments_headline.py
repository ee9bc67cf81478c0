"""The headline of the ready-made comparison *expandable segments off vs on*: each run's peak reserved and its
allocator cache gap (peak reserved minus peak allocated: memory the caching allocator held but no tensor used),
as the two runs' allocator counters measured them. Pure Python (no torch), like the rest of a comparison's result."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..base.text import Message, format_bytes
from .plan import Contender

if TYPE_CHECKING:
    from .result import ContenderResult


def cache_gap(run: ContenderResult) -> int | None:
    """Peak reserved minus peak allocated of one run (never below 0), or None where the allocator kept no cache."""
    if not run.peak_reserved_bytes or run.peak_allocated_bytes is None:
        return None
    return max(run.peak_reserved_bytes - run.peak_allocated_bytes, 0)


def segments_headline(contenders: Sequence[Contender], measured: Sequence[ContenderResult], speed: str) -> str | None:
    """For two runs that differ only in expandable segments: 'expandable segments: peak reserved 3.10 GB off vs
    2.40 GB on, cache gap 900.00 MB vs 100.00 MB ...', then `speed` (the comparison's images/s headline); None
    for any other comparison, or when a run has no caching allocator's peaks (not on CUDA)."""
    if len(contenders) != 2 or len(measured) != 2:
        return None
    first, second = (c.config.to_dict() for c in contenders)
    if {f for f, v in first.items() if second[f] != v} != {"expandable_segments"}:
        return None
    by_index = {r.index: r for r in measured}
    off, on = (by_index[c.index] for c in sorted(contenders, key=lambda c: c.config.expandable_segments))
    off_gap, on_gap = cache_gap(off), cache_gap(on)
    if off_gap is None or on_gap is None:
        return None
    assert off.peak_reserved_bytes is not None and on.peak_reserved_bytes is not None
    return Message(
        "expandable segments: peak reserved {off_reserved} off vs {on_reserved} on, cache gap (peak reserved "
        "minus peak allocated) {off_gap} vs {on_gap}; {speed}",
        off_reserved=format_bytes(off.peak_reserved_bytes),
        on_reserved=format_bytes(on.peak_reserved_bytes),
        off_gap=format_bytes(off_gap),
        on_gap=format_bytes(on_gap),
        speed=speed,
    )
