"""The summary a finished run prints: the peak memory line says what kind of allocator segments the run had,
only where they were read back (a CUDA run that set expandable segments)."""

from __future__ import annotations

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.cli.summary_text import summary_text
from tests.support.events import summary


def peak_line(**changes: object) -> str:
    return next(line for line in summary_text(summary(**changes)).splitlines() if line.startswith("peak memory"))


def test_the_segments_read_back_are_named_beside_the_peak() -> None:
    plain = peak_line()
    s = summary()
    assert plain == (
        f"peak memory {format_bytes(s.peak_allocated_bytes)} allocated, {format_bytes(s.peak_reserved_bytes)} reserved"
    )
    assert peak_line(expandable_segments=True) == plain + ", expandable segments (read back from the allocator)"
    assert peak_line(expandable_segments=False) == plain + ", fixed segments (read back from the allocator)"
