"""A real CUDA memory snapshot, recorded here, read by the torch-free reader, the CLI and the snapshot window.
Skipped without CUDA."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from gpu_train_monitor.gui.memory.snapshot_window import SnapshotWindow
from gpu_train_monitor.memory.snapshot import MemoryHistory
from gpu_train_monitor.memory.snapshot_reader import read_snapshot
from tests.support.cli import cli_in_process

pytestmark = pytest.mark.gpu
MIB = 1 << 20


def allocate_the_big_one() -> torch.Tensor:
    return torch.empty(256 * MIB, dtype=torch.uint8, device="cuda")


def _record(path: Path, max_entries: int, small: int) -> int:
    """Record `small` 1 MiB tensors (half freed again) and a 256 MiB one; returns memory_allocated at the dump."""
    history = MemoryHistory("cuda", max_entries=max_entries)
    history.start()
    try:
        kept = [torch.empty(MIB, dtype=torch.uint8, device="cuda") for _ in range(small)]
        del kept[::2]
        big = allocate_the_big_one()
        torch.cuda.synchronize()
        allocated = int(torch.cuda.memory_allocated())
        history.save(path)
        del big, kept
    finally:
        history.stop()
    return allocated


def test_a_recorded_snapshot_is_read_with_its_peak_and_the_frames_that_made_it(tmp_path: Path) -> None:
    path = tmp_path / "real.pickle"
    allocated = _record(path, max_entries=100_000, small=20)
    summary = read_snapshot(path).summary
    assert summary.events > 20
    assert summary.peak_bytes >= 256 * MIB
    # the replay ends where the allocator stood at the dump (requested bytes: MiB tensors are not rounded further)
    assert abs(summary.end_bytes - allocated) <= MIB
    capacity = torch.cuda.get_device_properties(0).total_memory
    assert summary.bound_bytes is not None and summary.peak_bytes <= summary.bound_bytes <= capacity
    biggest = summary.largest_at_peak[0]
    assert biggest.size_bytes >= 256 * MIB and biggest.event is not None
    assert summary.stacks_recorded and biggest.stack_depth > 0
    assert any(frame.name == "allocate_the_big_one" for frame in biggest.frames), biggest.frames
    assert all("/torch/" not in frame.filename for frame in biggest.frames)


def test_a_trace_that_began_mid_run_starts_from_what_was_live(tmp_path: Path) -> None:
    path = tmp_path / "ring.pickle"
    allocated = _record(path, max_entries=50, small=200)  # the ring keeps the last 50 events only
    reading = read_snapshot(path)
    assert reading.summary.events <= 50
    assert reading.summary.start_bytes > 0  # tensors allocated before the kept events
    assert int(reading.live_bytes.min()) >= 0
    assert abs(reading.summary.end_bytes - allocated) <= MIB


def test_the_cli_and_the_window_open_a_real_snapshot(tmp_path: Path, qtbot) -> None:
    path = tmp_path / "real.pickle"
    _record(path, max_entries=100_000, small=4)
    result = cli_in_process("snapshot", str(path), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["peak_bytes"] >= 256 * MIB
    window = SnapshotWindow()
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.loaded, timeout=30_000):
        window.open_file(str(path))
    assert window.table.rowCount() >= 1 and "allocate_the_big_one" in window.table.item(0, 2).text()
