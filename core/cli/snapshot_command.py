"""`gpu-train-monitor snapshot PATH`: what a CUDA memory snapshot (`torch.cuda.memory._dump_snapshot`, from any
machine) says: its events, the peak of live allocations and the largest allocations live there with the user's
frames that made them. Needs neither torch nor a GPU.

Exit codes: 0 read; 2 a file that is missing, unreadable, not a snapshot or unsafe (one line: a pickle that
names any Python object is refused without running it).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..base.text import format_bytes, printable
from .stdout import out


def add_snapshot_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "snapshot",
        help="summarise a CUDA memory snapshot (torch.cuda.memory._dump_snapshot): its peak and what was live there",
        epilog="example: gpu-train-monitor snapshot run.pickle --json. exit codes: 0 read; 2 a file that cannot be "
        "read as a snapshot (one line)",
    )
    parser.add_argument("path", metavar="PATH", help="the snapshot's pickle file")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text (keys: docs/command-line.md)")
    parser.add_argument(
        "--device",
        metavar="N",
        type=int,
        help="the CUDA device whose trace to read (default: the one with the most events)",
    )
    parser.add_argument(
        "--top",
        metavar="N",
        type=_positive,
        default=10,
        help="how many of the largest allocations to list (default: 10)",
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {value}")
    return value


def command_snapshot(args: argparse.Namespace) -> int:
    from ..memory.snapshot_reader import read_snapshot

    summary = read_snapshot(args.path, args.device, args.top).summary
    if args.json:
        out(json.dumps(summary.to_dict(), indent=2))
        return 0
    for line in summary_lines(summary):
        out(printable(line))  # file names come from another machine's stacks
    return 0


def summary_lines(summary: Any) -> list[str]:
    """The text `snapshot` prints for a `SnapshotSummary`."""
    devices = ", ".join(f"cuda:{d}" for d in summary.devices) or "none"
    lines = [
        f"device          cuda:{summary.device} (in the file: {devices})",
        f"events          {summary.events}"
        + (f" over {summary.duration_s:.3f} s" if summary.duration_s is not None else ""),
        f"peak            {format_bytes(summary.peak_bytes)} live"
        + (f" after event {summary.peak_event}" if summary.peak_event >= 0 else " (at the dump: no trace)"),
        f"at start / end  {format_bytes(summary.start_bytes)} / {format_bytes(summary.end_bytes)} live",
        f"reserved        {format_bytes(summary.reserved_bytes)} at the dump"
        + (f", {format_bytes(summary.bound_bytes)} at most" if summary.bound_bytes is not None else ""),
    ]
    if summary.oom_events:
        lines.append(f"out of memory   {summary.oom_events} time(s) in the trace")
    if not summary.stacks_recorded:
        lines.append(
            "stacks          none recorded (torch.cuda.memory._record_memory_history(stacks='python') records them)"
        )
    lines.append(f"largest at the peak ({len(summary.largest_at_peak)}):")
    for allocation in summary.largest_at_peak:
        when = "before the trace" if allocation.event is None else f"event {allocation.event}"
        lines.append(f"  {format_bytes(allocation.size_bytes):>10}  at 0x{allocation.address:x}, allocated {when}")
        if allocation.frames:
            lines.extend(f"      {frame.text()}" for frame in allocation.frames)
        elif allocation.stack_depth:
            lines.append("      (only PyTorch's own frames)")
    return lines
