"""The active-memory timeline of a CUDA memory snapshot, its peak and what was live there. Torch-free.

How live bytes are counted (the choice, and why):
- Sizes are the bytes requested, as the trace records them (the allocator rounds each block up a little more;
  `torch.cuda.memory_allocated` counts the rounded sizes).
- An allocation lives from its `alloc` event to its `free_completed` event, when the allocator may hand the block
  out again (between `free_requested` and `free_completed` the memory is still held, waiting for another stream).
- The trace is a ring buffer (`max_entries`), so it often starts mid-run. The bytes live before its first event
  are found, as pytorch.org/memory_viz finds them, from the trace and the blocks at the dump: a `free_completed`
  of an address never seen allocated is a block allocated before the trace began (live from the start until
  that free), and a block still allocated at the dump that the trace never allocated was live all along. Their
  sizes start the timeline, which therefore never goes negative.
- A second free of an address already freed (no `alloc` in between) is ignored; an `alloc` at an address that
  is still live ends the earlier allocation there (its free was lost).
- Live bytes cannot exceed what the allocator reserved: the reserved timeline (`segment_alloc` / `segment_map`
  add, `segment_free` / `segment_unmap` remove, ending at the segments of the dump) bounds every count, so an
  inconsistent file never shows more memory than the device held.

The loop over events is plain Python (a dict of live addresses); the running sums are numpy: 1,000,000 events
read and summarised in about 2 s on a 2-core machine (tests/benchmarks/snapshot_viewer.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base.text import Message
from .snapshot_file import SnapshotError, read_snapshot_file
from .snapshot_summary import LiveAllocation, SnapshotSummary, user_frames

TOP_ALLOCATIONS = 10
_LIVE_STATES = ("active_allocated", "active_awaiting_free", "active_pending_free")
_RESERVE = {"segment_alloc": 1, "segment_map": 1, "segment_free": -1, "segment_unmap": -1}


@dataclass(frozen=True)
class SnapshotReading:
    """A summary with its timelines: `live_bytes[i]` and `reserved_bytes[i]` after event i (read-only arrays)."""

    summary: SnapshotSummary
    live_bytes: np.ndarray
    reserved_bytes: np.ndarray


@dataclass
class _Replay:
    """The trace replayed once: per-event changes and each allocation's life."""

    deltas: np.ndarray
    reserve_deltas: np.ndarray
    starts: np.ndarray  # per allocation: the event that made it (-1: before the trace)
    ends: np.ndarray  # per allocation: the event that freed it (len(trace): not freed in the trace)
    sizes: np.ndarray
    addresses: list[int]
    frame_sources: list[Any]  # per allocation: the frames recorded for it
    start_bytes: int
    oom_events: int


def read_snapshot(
    path: str | os.PathLike[str], device: int | None = None, top: int = TOP_ALLOCATIONS
) -> SnapshotReading:
    """Read and summarise the snapshot at `path` for `device` (default: the device with the longest trace)."""
    data = read_snapshot_file(path)
    return summarise(data, str(path), device, top)


def traced_devices(data: dict[str, Any]) -> tuple[int, ...]:
    """The devices with a trace or segments in the snapshot."""
    with_trace = {i for i, trace in enumerate(data.get("device_traces", [])) if trace}
    with_segments = {s.get("device") for s in data["segments"] if isinstance(s, dict)}
    return tuple(sorted(with_trace | {d for d in with_segments if isinstance(d, int)}))


def summarise(
    data: dict[str, Any], path: str, device: int | None = None, top: int = TOP_ALLOCATIONS
) -> SnapshotReading:
    """The summary and timelines of one device of a snapshot already loaded (`read_snapshot_file`)."""
    devices = traced_devices(data)
    traces = data.get("device_traces", [])
    if device is None:
        device = max(devices, key=lambda d: (len(traces[d]) if d < len(traces) else 0, -d), default=0)
    elif device not in devices:
        known = ", ".join(str(d) for d in devices) or "none"
        raise SnapshotError(
            Message(
                "memory snapshot {path}: no device {device} in it (devices: {known})",
                path=path,
                device=device,
                known=known,
            )
        )
    trace = traces[device] if device < len(traces) else []
    segments = [s for s in data["segments"] if isinstance(s, dict) and s.get("device", 0) == device]
    try:
        replay = _replay(trace, segments)
        live = replay.start_bytes + np.cumsum(replay.deltas)
        reserved_end = sum(int(s.get("total_size", 0)) for s in segments)
        reserved = reserved_end - int(replay.reserve_deltas.sum()) + np.cumsum(replay.reserve_deltas)
        np.maximum(reserved, 0, out=reserved)
        time_span = _duration_s(trace)
    except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as exc:
        raise SnapshotError(
            Message("memory snapshot {path}: not a PyTorch memory snapshot ({why})", path=path, why=_why(exc))
        ) from None
    has_segments = bool(segments) or bool(replay.reserve_deltas.any())
    bound = max(int(reserved.max(initial=0)), reserved_end) if has_segments else None
    np.maximum(live, 0, out=live)
    if bound is not None:
        np.minimum(live, bound, out=live)
    peak_event = int(np.argmax(live)) if len(live) else -1
    start = _capped(replay.start_bytes, bound)
    peak = int(live[peak_event]) if len(live) else start
    largest = _largest_at(replay, peak_event, len(trace), top)
    live.setflags(write=False)
    reserved.setflags(write=False)
    summary = SnapshotSummary(
        path=path,
        device=device,
        devices=devices,
        events=len(trace),
        start_bytes=start,
        peak_bytes=peak,
        peak_event=peak_event,
        end_bytes=int(live[-1]) if len(live) else start,
        reserved_bytes=reserved_end,
        bound_bytes=bound,
        oom_events=replay.oom_events,
        duration_s=time_span,
        stacks_recorded=any(allocation.stack_depth for allocation in largest) or _has_frames(trace),
        largest_at_peak=largest,
    )
    return SnapshotReading(summary, live, reserved)


def _replay(trace: list[Any], segments: list[dict[str, Any]]) -> _Replay:
    n = len(trace)
    deltas = [0] * n
    reserve_deltas = [0] * n
    live: dict[int, int] = {}  # address -> allocation number
    seen: set[int] = set()  # addresses allocated (or freed) in the trace
    starts: list[int] = []
    ends: list[int] = []
    sizes: list[int] = []
    addresses: list[int] = []
    frame_sources: list[Any] = []
    start_bytes = oom_events = 0
    for i, event in enumerate(trace):
        action = event["action"]
        if action == "alloc":
            address, size = event["addr"], int(event["size"])
            earlier = live.get(address)
            if earlier is not None:  # its free was lost: the block was handed out again
                ends[earlier] = i
                deltas[i] -= sizes[earlier]
            live[address] = len(sizes)
            seen.add(address)
            starts.append(i)
            ends.append(n)
            sizes.append(size)
            addresses.append(address)
            frame_sources.append(event.get("frames"))
            deltas[i] += size
        elif action == "free_completed":
            address = event["addr"]
            number = live.pop(address, None)
            if number is not None:
                ends[number] = i
                deltas[i] = -sizes[number]
            elif address not in seen:  # allocated before the trace began: live from the start until now
                seen.add(address)
                size = int(event["size"])
                start_bytes += size
                deltas[i] = -size
                starts.append(-1)
                ends.append(i)
                sizes.append(size)
                addresses.append(address)
                frame_sources.append(event.get("frames"))
            # else: a second free of a block already freed, ignored
        elif action in _RESERVE:
            reserve_deltas[i] = _RESERVE[action] * int(event["size"])
        elif action == "oom":
            oom_events += 1
    for segment in segments:  # blocks allocated at the dump that the trace never allocated: live all along
        for block in segment.get("blocks", ()):
            address = block.get("address")
            if block.get("state") in _LIVE_STATES and address not in live and address not in seen:
                size = int(block.get("requested_size", block.get("size", 0)))  # the trace's sizes are requested
                start_bytes += size
                starts.append(-1)
                ends.append(n)
                sizes.append(size)
                addresses.append(address)
                frame_sources.append(block.get("frames"))
    return _Replay(
        deltas=np.fromiter(deltas, dtype=np.int64, count=n),
        reserve_deltas=np.fromiter(reserve_deltas, dtype=np.int64, count=n),
        starts=np.asarray(starts, dtype=np.int64),
        ends=np.asarray(ends, dtype=np.int64),
        sizes=np.asarray(sizes, dtype=np.int64),
        addresses=addresses,
        frame_sources=frame_sources,
        start_bytes=start_bytes,
        oom_events=oom_events,
    )


def _largest_at(replay: _Replay, peak_event: int, events: int, top: int) -> tuple[LiveAllocation, ...]:
    """The `top` largest allocations live just after `peak_event` (-1: at the dump, for an empty trace)."""
    at = peak_event if peak_event >= 0 else events
    live = (replay.starts <= at) & (replay.ends > at) if peak_event >= 0 else replay.ends >= events
    numbers = np.flatnonzero(live)
    order = numbers[np.argsort(-replay.sizes[numbers], kind="stable")[:top]]
    largest = []
    for number in order.tolist():
        frames, depth = user_frames(replay.frame_sources[number])
        start, end = int(replay.starts[number]), int(replay.ends[number])
        largest.append(
            LiveAllocation(
                int(replay.addresses[number]),
                int(replay.sizes[number]),
                start if start >= 0 else None,
                frames,
                depth,
                end if end < events else None,
            )
        )
    return tuple(largest)


def _has_frames(trace: list[Any]) -> bool:
    """Whether the trace recorded stacks (its first allocation has frames): `_record_memory_history(stacks=...)`."""
    for event in trace[:1000]:
        if isinstance(event, dict) and event.get("action") == "alloc":
            return bool(event.get("frames"))
    return False


def _duration_s(trace: list[Any]) -> float | None:
    if not trace:
        return None
    first, last = trace[0].get("time_us"), trace[-1].get("time_us")
    if not isinstance(first, int | float) or not isinstance(last, int | float):
        return None
    return max(float(last - first), 0.0) / 1e6


def _capped(value: int, bound: int | None) -> int:
    value = max(value, 0)
    return value if bound is None else min(value, bound)


def _why(exc: BaseException) -> Message:
    if isinstance(exc, KeyError):
        return Message("an event lacks {key}", key=str(exc))
    return Message("an event has a value of the wrong type")
