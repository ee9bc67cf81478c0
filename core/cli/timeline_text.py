"""What `predict --timeline` prints: a predicted step's memory over time, told at its start, its peak and where each
phase ends, by holder; and the `timeline` list its JSON carries (every point kept).
"""

from __future__ import annotations

from typing import Any

from ..base.text import format_bytes, printable
from ..events.step_timeline import HOLDERS, StepTimeline, TimelinePoint

_HEADINGS = ("params", "grads", "optimizer", "batch", "activations", "temporaries")


def add_timeline_option(parser: Any) -> None:
    parser.add_argument(
        "--timeline",
        action="store_true",
        help="the step's memory over time: bytes by holder at its start, its peak and each phase's end (with "
        "--json, a `timeline` list of every point per prediction)",
    )


def timeline_lines(timeline: StepTimeline) -> list[str]:
    """The moments of `timeline` (see the module doc) as table lines; the block running named last."""
    lines = [f"  {'moment':<16} {'total':>10} " + " ".join(f"{heading:>11}" for heading in _HEADINGS) + "  running"]
    moments: list[tuple[str, TimelinePoint]] = []
    if timeline.points:
        moments.append(("start", timeline.points[0]))
    peak = timeline.peak
    if peak is not None:
        moments.append((f"peak ({peak.phase})", peak))
    ends = timeline.phase_ends()
    moments += [(f"{phase} end", point) for phase, point in ends]
    moments.sort(key=lambda moment: moment[1].index)
    for label, point in moments:
        parts = " ".join(f"{format_bytes(getattr(point, key)):>11}" for key in HOLDERS)
        lines.append(f"  {label:<16} {format_bytes(point.total_bytes):>10} {parts}  {printable(point.module)}")
    return lines


def timeline_json(timeline: StepTimeline) -> list[dict[str, Any]]:
    """The `timeline` list: each point's index, phase, module, bytes by holder and total."""
    return timeline.as_json()
