"""The headline of the ready-made comparison *expandable segments off vs on*: each run's peak reserved and its
allocator cache gap (peak reserved minus peak allocated: memory the caching allocator held but no tensor used),
as the two runs' allocator counters measured them, and whether the allocator's segments, read back at each run's
end, were of the kind the run asked for. Pure Python (no torch), like the rest of a comparison's result."""

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
    """For two runs that differ only in expandable segments, off and on: 'expandable segments (read back from
    the allocator): peak reserved 3.10 GB off vs 2.40 GB on, cache gap ... 900.00 MB vs 100.00 MB; ' then `speed`
    (the comparison's images/s headline); None for any other comparison, or when a run has no caching allocator's
    peaks (not on CUDA)."""
    if len(contenders) != 2 or len(measured) != 2:
        return None
    first, second = (c.config.to_dict() for c in contenders)
    if {f for f, v in first.items() if second[f] != v} != {"expandable_segments"}:
        return None
    chosen = {c.config.expandable_segments: c for c in contenders}
    if set(chosen) != {"off", "on"}:
        return None
    by_index = {r.index: r for r in measured}
    off, on = by_index[chosen["off"].index], by_index[chosen["on"].index]
    off_gap, on_gap = cache_gap(off), cache_gap(on)
    if off_gap is None or on_gap is None:
        return None
    assert off.peak_reserved_bytes is not None and on.peak_reserved_bytes is not None
    figures = Message(
        "peak reserved {off_reserved} off vs {on_reserved} on, cache gap (peak reserved minus peak allocated) "
        "{off_gap} vs {on_gap}",
        off_reserved=format_bytes(off.peak_reserved_bytes),
        on_reserved=format_bytes(on.peak_reserved_bytes),
        off_gap=format_bytes(off_gap),
        on_gap=format_bytes(on_gap),
    )
    return Message("{how}: {figures}; {speed}", how=_read_back(off, on), figures=figures, speed=speed)


def _read_back(off: ContenderResult, on: ContenderResult) -> str:
    """What the allocator's segments said about each run: the setting is claimed only where they showed it."""
    for run, asked in ((off, False), (on, True)):
        if run.segments_expandable is not None and run.segments_expandable != asked:
            return Message(
                "expandable segments did not take effect as asked: the allocator's segments of {label} were {kind}, "
                "so the runs do not differ in them",
                label=run.label,
                kind=Message("expandable") if run.segments_expandable else Message("fixed"),
            )
    if off.segments_expandable is None or on.segments_expandable is None:
        return Message("expandable segments (not confirmed: the allocator's segments were not read back from each run)")
    return Message("expandable segments (read back from the allocator's segments of each run)")
