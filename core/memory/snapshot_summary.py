"""What a memory snapshot says, as plain values: the summary the CLI prints and the window shows.

Frozen: a summary is built in a background thread and read in the GUI thread. `to_dict` gives the JSON the CLI's
`snapshot --json` prints; its keys are documented in docs/command-line.md and stay stable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MAX_USER_FRAMES = 5  # the innermost frames of the user's own code shown per allocation

# Frames that are not the user's code: C/C++ (the allocator, the dispatcher, CPython's loop), PyTorch's own Python,
# and Python's frozen start-up modules. What is left, innermost first, is the code that asked for the memory.
_NATIVE_SUFFIXES = (".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".cu", ".cuh")
_TORCH_PARTS = ("/torch/", "\\torch\\")
_NATIVE_LIBRARY = re.compile(r"\.(so(\.\d+)*|dylib|dll|pyd)$")


@dataclass(frozen=True)
class StackFrame:
    """One frame of a recorded stack: file, line and function."""

    filename: str
    line: int
    name: str

    def text(self) -> str:
        return f"{self.filename}:{self.line} in {self.name}"


@dataclass(frozen=True)
class LiveAllocation:
    """An allocation live at the peak. `event`: the index of its `alloc` event, None when it was allocated before
    the trace began; `freed_event`: the index of its `free_completed`, None when it was still live at the dump.
    `frames`: its innermost user frames; `stack_depth`: how many frames were recorded in all (0: the snapshot has
    no stack for it)."""

    address: int
    size_bytes: int
    event: int | None
    frames: tuple[StackFrame, ...]
    stack_depth: int
    freed_event: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "address": self.address,
            "size_bytes": self.size_bytes,
            "event": self.event,
            "freed_event": self.freed_event,
            "stack_depth": self.stack_depth,
            "frames": [{"filename": f.filename, "line": f.line, "name": f.name} for f in self.frames],
        }


@dataclass(frozen=True)
class SnapshotSummary:
    """One device's trace in a snapshot. Byte counts are live allocations (the bytes requested, as the trace
    records them) unless named reserved. `peak_event` is -1 when the trace is empty (the peak is then the state
    at the dump). `bound_bytes`: the most memory the allocator reserved over the trace, which live allocations
    cannot exceed (None when the snapshot records no segments for the device); every count here is capped by it."""

    path: str
    device: int
    devices: tuple[int, ...]
    events: int
    start_bytes: int
    peak_bytes: int
    peak_event: int
    end_bytes: int
    reserved_bytes: int
    bound_bytes: int | None
    oom_events: int
    duration_s: float | None
    stacks_recorded: bool
    largest_at_peak: tuple[LiveAllocation, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "device": self.device,
            "devices": list(self.devices),
            "events": self.events,
            "start_bytes": self.start_bytes,
            "peak_bytes": self.peak_bytes,
            "peak_event": self.peak_event,
            "end_bytes": self.end_bytes,
            "reserved_bytes": self.reserved_bytes,
            "bound_bytes": self.bound_bytes,
            "oom_events": self.oom_events,
            "duration_s": self.duration_s,
            "stacks_recorded": self.stacks_recorded,
            "largest_at_peak": [allocation.to_dict() for allocation in self.largest_at_peak],
        }


def is_user_frame(filename: str) -> bool:
    """Whether a frame is the user's code rather than C/C++, PyTorch's own Python or Python's start-up."""
    if not filename or filename == "??" or filename.startswith("<"):
        return False
    if filename.endswith(_NATIVE_SUFFIXES) or _NATIVE_LIBRARY.search(filename):
        return False  # C/C++ source, or a native library named where its symbols were not resolved
    return not any(part in filename for part in _TORCH_PARTS)


def user_frames(frames: Any, limit: int = MAX_USER_FRAMES) -> tuple[tuple[StackFrame, ...], int]:
    """The innermost `limit` user frames of a recorded stack (innermost first, as torch records them) and the
    stack's depth; entries that are not frames are skipped."""
    if not isinstance(frames, Sequence) or isinstance(frames, str):
        return (), 0
    kept: list[StackFrame] = []
    for frame in frames:
        if len(kept) >= limit:
            break
        if not isinstance(frame, dict):
            continue
        filename, line, name = frame.get("filename"), frame.get("line"), frame.get("name")
        if isinstance(filename, str) and is_user_frame(filename):
            kept.append(
                StackFrame(filename, line if isinstance(line, int) else 0, name if isinstance(name, str) else "?")
            )
    return tuple(kept), len(frames)
