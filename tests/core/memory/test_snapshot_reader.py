"""The active-memory timeline of a snapshot: live bytes per event, the peak and what is live there, for traces that
reuse addresses, free twice, start mid-run or disagree with their segments."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from gpu_train_monitor.memory.snapshot_file import SnapshotError
from gpu_train_monitor.memory.snapshot_reader import read_snapshot, summarise
from gpu_train_monitor.memory.snapshot_summary import is_user_frame
from tests.support import snapshots
from tests.support.snapshots import USER_STACK, block, event, segment, snapshot

A, B, C = 0x1000, 0x2000, 0x3000
MB = 1 << 20


def _alloc(addr: int, size: int, **kw: object) -> dict:
    return event("alloc", addr, size, **kw)  # type: ignore[arg-type]


def _free(addr: int, size: int) -> list[dict]:
    return [event("free_requested", addr, size), event("free_completed", addr, size)]


def _live(trace: list[dict], blocks: list[dict] | None = None, total: int = 64 * MB) -> tuple[list[int], object]:
    reading = summarise(snapshot([segment(0, total, blocks or [])], [trace]), "t.pickle")
    return reading.live_bytes.tolist(), reading.summary


def test_alloc_free_and_reuse_of_an_address() -> None:
    trace = [_alloc(A, 100), _alloc(B, 50), *_free(A, 100), _alloc(A, 30), *_free(B, 50)]
    live, summary = _live(trace, [block(A, 30)])
    assert live == [100, 150, 150, 50, 80, 80, 30]  # free_requested holds the bytes until free_completed
    assert summary.peak_bytes == 150 and summary.peak_event == 1 and summary.events == 7
    assert [(a.address, a.size_bytes, a.event) for a in summary.largest_at_peak] == [(A, 100, 0), (B, 50, 1)]
    assert [a.freed_event for a in summary.largest_at_peak] == [3, 6]  # their free_completed events
    assert summary.start_bytes == 0 and summary.end_bytes == 30


def test_a_duplicate_free_is_ignored() -> None:
    trace = [_alloc(A, 100), *_free(A, 100), *_free(A, 100), _alloc(B, 10)]
    live, summary = _live(trace, [block(B, 10)])
    assert live == [100, 100, 0, 0, 0, 10]
    assert min(live) >= 0 and summary.end_bytes == 10


def test_a_trace_that_starts_mid_run() -> None:
    """Blocks freed before being seen allocated were live from the start: they start the timeline."""
    trace = [*_free(A, 400), _alloc(B, 100), *_free(C, 50), *_free(C, 50)]
    live, summary = _live(trace, [block(B, 100)])
    assert summary.start_bytes == 450
    assert live == [450, 50, 150, 150, 100, 100, 100]
    assert min(live) >= 0
    assert summary.peak_bytes == 450 and summary.peak_event == 0
    first = summary.largest_at_peak[0]
    assert (first.address, first.size_bytes, first.event) == (A, 400, None)  # allocated before the trace


def test_blocks_live_at_the_dump_that_the_trace_never_allocated_were_live_all_along() -> None:
    stack = USER_STACK
    trace = [_alloc(A, 100), *_free(A, 100)]
    live, summary = _live(trace, [block(B, 1000, frames=stack), block(C, 5, state="inactive")])
    assert live == [1100, 1100, 1000]
    assert summary.start_bytes == 1000 and summary.peak_bytes == 1100
    whole = summary.largest_at_peak[0]
    assert whole.event is None and whole.size_bytes == 1000 and whole.freed_event is None  # live at the dump
    assert [f.text() for f in whole.frames] == [
        "/home/me/project/model.py:42 in forward",
        "/home/me/project/train.py:7 in train_step",
    ]
    assert whole.stack_depth == len(stack)


def test_an_alloc_over_a_live_address_ends_the_earlier_one() -> None:
    live, _ = _live([_alloc(A, 100), _alloc(A, 40)], [block(A, 40)])
    assert live == [100, 40]


def test_totals_never_exceed_what_the_allocator_reserved() -> None:
    """Frees of blocks never seen allocated (an inconsistent file) cannot push the count past the segments."""
    trace = [event("free_completed", 0x10000 + i * 8, 10 * MB) for i in range(20)]
    live, summary = _live(trace, total=32 * MB)
    assert summary.bound_bytes == 32 * MB
    assert max(live) <= 32 * MB and min(live) >= 0
    assert summary.peak_bytes <= 32 * MB and summary.start_bytes <= 32 * MB


def test_reserved_timeline_follows_segment_events() -> None:
    trace = [
        event("segment_alloc", 0, 20 * MB),
        _alloc(A, 5 * MB),
        event("segment_free", 0x8000, 2 * MB),
        *_free(A, 5 * MB),
        {"action": "oom", "size": 99 * MB, "device_free": 0, "stream": 0, "frames": []},
    ]
    reading = summarise(snapshot([segment(0, 20 * MB, [])], [trace]), "t")
    assert reading.reserved_bytes.tolist() == [22 * MB, 22 * MB, 20 * MB, 20 * MB, 20 * MB, 20 * MB]
    assert reading.summary.bound_bytes == 22 * MB and reading.summary.oom_events == 1


def test_frames_keep_the_users_code_innermost_first_and_stacks_may_be_absent() -> None:
    with_stack = summarise(snapshot([segment(0, MB, [])], [[_alloc(A, 10, frames=USER_STACK)]]), "t").summary
    assert with_stack.stacks_recorded
    assert [f.name for f in with_stack.largest_at_peak[0].frames] == ["forward", "train_step"]
    without = summarise(snapshot([segment(0, MB, [])], [[_alloc(A, 10)]]), "t").summary
    assert not without.stacks_recorded and without.largest_at_peak[0].frames == ()


def test_an_empty_trace_summarises_the_dump() -> None:
    summary = summarise(snapshot([segment(0, MB, [block(A, 300), block(B, 700)])], [[]]), "t").summary
    assert summary.events == 0 and summary.peak_event == -1
    assert summary.peak_bytes == 1000 and [a.size_bytes for a in summary.largest_at_peak] == [700, 300]


def test_the_device_with_the_longest_trace_is_chosen_and_others_can_be_asked_for() -> None:
    data = snapshot(
        [segment(0, MB, [], device=0), segment(0x9000, MB, [], device=1)],
        [[_alloc(A, 1)], [_alloc(A, 2), _alloc(B, 3)]],
    )
    assert summarise(data, "t").summary.device == 1
    assert summarise(data, "t", device=0).summary.peak_bytes == 1
    assert summarise(data, "t").summary.devices == (0, 1)
    with pytest.raises(SnapshotError, match="no device 5"):
        summarise(data, "t", device=5)


@pytest.mark.parametrize("bad_event", [["alloc"], {"action": "alloc"}, {"action": "alloc", "addr": 1, "size": "x"}])
def test_malformed_events_are_one_line(bad_event: object) -> None:
    with pytest.raises(SnapshotError, match="not a PyTorch memory snapshot") as caught:
        summarise(snapshot([segment(0, MB, [])], [[bad_event]]), "t")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("events", [10, 1000, 20_000])
def test_synthetic_traces_match_a_direct_replay(tmp_path: Path, events: int) -> None:
    data = snapshots.training_like(events, seed=events, frames_every=7)
    reading = read_snapshot(snapshots.write(tmp_path / "s.pickle", data))
    expected, total, sizes = [], 0, {}
    for e in data["device_traces"][0]:
        if e["action"] == "alloc":
            sizes[e["addr"]] = e["size"]
            total += e["size"]
        elif e["action"] == "free_completed":
            total -= sizes.pop(e["addr"])
        expected.append(total)
    assert reading.summary.events == events
    assert np.array_equal(reading.live_bytes, np.asarray(expected))
    assert reading.summary.peak_bytes == max(expected)
    assert reading.summary.end_bytes == expected[-1] == sum(b["size"] for b in data["segments"][0]["blocks"])
    at_peak = sum(a.size_bytes for a in reading.summary.largest_at_peak)
    assert at_peak <= reading.summary.peak_bytes
    assert not reading.live_bytes.flags.writeable


@pytest.mark.slow
def test_a_million_events_read_in_under_5_s(tmp_path: Path) -> None:
    path = snapshots.write(tmp_path / "big.pickle", snapshots.training_like(1_000_000, frames_every=1000))
    started = time.perf_counter()
    reading = read_snapshot(path)
    elapsed = time.perf_counter() - started
    assert reading.summary.events == 1_000_000 and len(reading.live_bytes) == 1_000_000
    assert elapsed < 5.0, f"{elapsed:.2f} s"


def test_blocks_at_the_dump_count_their_requested_size_as_the_trace_does() -> None:
    rounded = {**block(B, 1024), "requested_size": 1000}
    live, summary = _live([_alloc(A, 10)], [block(A, 10), rounded])
    assert live == [1010] and summary.start_bytes == 1000


@pytest.mark.parametrize(
    ("filename", "user"),
    [
        ("/home/me/project/model.py", True),
        ("/home/me/.sources/train.py", True),
        ("/venv/lib/python3.11/site-packages/transformers/models/gpt2/modeling_gpt2.py", True),
        ("/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py", False),
        ("/pytorch/c10/cuda/CUDACachingAllocator.cpp", False),
        ("/usr/lib/x86_64-linux-gnu/libc.so.6", False),
        ("/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so", False),
        ("Python/ceval.c", False),
        ("<frozen runpy>", False),
        ("??", False),
        ("", False),
    ],
)
def test_user_frames_are_neither_native_nor_pytorchs_own(filename: str, user: bool) -> None:
    assert is_user_frame(filename) is user
