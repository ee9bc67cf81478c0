"""The memory snapshot window: read in the background, the timeline and the largest allocations at the peak; a bad
or malicious file says why in one line."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from gpu_train_monitor.gui.memory.snapshot_window import SnapshotWindow
from tests.support import snapshots
from tests.support.snapshots import USER_STACK, block, event, segment, snapshot


@pytest.fixture
def viewer(qtbot):
    window = SnapshotWindow()
    qtbot.addWidget(window)  # closeEvent at teardown: the reader's thread is waited for
    window.show()
    return window


def _open(qtbot, viewer: SnapshotWindow, path: Path, signal: str = "loaded") -> list:
    with qtbot.waitSignal(getattr(viewer, signal), timeout=20_000) as blocker:
        viewer.open_file(str(path))
    return blocker.args


def test_a_snapshot_shows_its_peak_timeline_and_largest_allocations_with_frames(qtbot, viewer, tmp_path):
    trace = [
        event("alloc", 0x1000, 3_000_000, frames=USER_STACK),
        event("alloc", 0x2000, 1_000_000),
        event("free_requested", 0x1000, 3_000_000),
        event("free_completed", 0x1000, 3_000_000),
    ]
    path = snapshots.write(
        tmp_path / "run.pickle", snapshot([segment(0, 8_000_000, [block(0x2000, 1_000_000)])], [trace])
    )
    _open(qtbot, viewer, path)
    assert "run.pickle" in viewer.windowTitle()
    assert "Peak 4.00 MB" in viewer.header.text() and "4 allocator events" in viewer.header.text()
    assert viewer.table.rowCount() == 2
    assert viewer.table.item(0, 0).text() == "3.00 MB"
    assert viewer.table.item(0, 1).text() == "event 0"
    assert viewer.table.item(0, 2).text() == "model.py:42 forward ← train.py:7 train_step"
    assert "/home/me/project/model.py:42 in forward" in viewer.table.item(0, 2).toolTip()
    assert viewer.table.item(1, 2).text() == "no stack recorded"
    x, y = viewer.plot.live_curve.getData()
    assert list(y) == [3_000_000, 4_000_000, 4_000_000, 1_000_000]
    assert viewer.plot.peak_line.isVisible() and viewer.plot.peak_line.value() == 1


def test_a_long_trace_is_drawn_decimated_and_redrawn_when_zoomed(qtbot, viewer, tmp_path):
    path = snapshots.write(tmp_path / "long.pickle", snapshots.training_like(200_000))
    _open(qtbot, viewer, path)
    full = viewer.plot.points_drawn()
    buckets = max(viewer.plot.plot.width(), 200)
    assert 0 < full <= 2 * buckets + 200_000 // buckets + 1  # a min and a max per pixel column, and a short tail
    live = viewer.reading.live_bytes
    assert viewer.plot.live_curve.getData()[1].max() == live.max()  # the peak survives decimation
    viewer.plot.plot.getPlotItem().setXRange(1000, 1100, padding=0)
    qtbot.waitUntil(lambda: viewer.plot.points_drawn() <= 110, timeout=5000)
    x, y = viewer.plot.live_curve.getData()
    assert x[0] <= 1000 and x[-1] >= 1100  # the zoomed range at full detail
    assert list(y) == list(live[int(x[0]) : int(x[-1]) + 1])


def test_a_malicious_file_is_refused_in_the_window_without_running_it(qtbot, viewer, tmp_path):
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    path = tmp_path / "evil.pickle"
    path.write_bytes(pickle.dumps({"segments": [], "device_traces": [[Payload()]]}))
    (message,) = _open(qtbot, viewer, path, "load_failed")
    assert "refused" in message and "\n" not in message
    assert viewer.header.text().startswith("memory snapshot") and "refused" in viewer.header.text()
    assert not marker.exists() and viewer.reading is None and viewer.table.rowCount() == 0


def test_a_file_that_is_not_a_snapshot_says_so(qtbot, viewer, tmp_path):
    path = tmp_path / "notes.pickle"
    path.write_bytes(b"just text")
    (message,) = _open(qtbot, viewer, path, "load_failed")
    assert "not a pickle" in message


def test_picking_a_row_shades_that_allocations_life_on_the_timeline(qtbot, viewer, tmp_path):
    trace = [
        event("alloc", 0x1000, 3_000_000),
        event("alloc", 0x2000, 1_000_000),
        event("free_requested", 0x1000, 3_000_000),
        event("free_completed", 0x1000, 3_000_000),
    ]
    path = snapshots.write(
        tmp_path / "run.pickle", snapshot([segment(0, 8_000_000, [block(0x2000, 1_000_000)])], [trace])
    )
    _open(qtbot, viewer, path)
    assert not viewer.plot.lifetime.isVisible()
    viewer.table.selectRow(0)  # 3 MB: allocated at event 0, freed at event 3
    assert viewer.plot.lifetime.isVisible() and viewer.plot.lifetime.getRegion() == (0, 3)
    viewer.table.selectRow(1)  # 1 MB: still live at the dump, to the trace's end
    assert viewer.plot.lifetime.getRegion() == (1, 3)


def test_in_chinese_the_window_has_no_english_left(qtbot, chinese, tmp_path):
    from tests.support.chinese_texts import english_in

    window = SnapshotWindow()
    qtbot.addWidget(window)
    window.show()
    trace = [event("alloc", 0x1000, 3_000_000, frames=USER_STACK), event("alloc", 0x2000, 1_000_000)]
    path = snapshots.write(tmp_path / "run.pickle", snapshot([segment(0, 8_000_000, [])], [[*_free_first(), *trace]]))
    _open(qtbot, window, path)
    window.table.selectRow(0)
    texts = [text for text in english_in(window) if "model.py" not in text and "train.py" not in text]  # file names
    assert texts == []
    assert "峰值" in window.header.text()


def _free_first() -> list:
    """A block freed before the trace saw it allocated: the header's 'already live when the trace began'."""
    return [event("free_requested", 0x9000, 500_000), event("free_completed", 0x9000, 500_000)]
