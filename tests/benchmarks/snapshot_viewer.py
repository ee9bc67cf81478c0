"""Benchmark: opening a 1,000,000-event CUDA memory snapshot and redrawing its timeline at several zooms.

    python tests/benchmarks/snapshot_viewer.py [--events 1000000] [--repeats 5] [--json PATH]

Snapshots are synthetic, in the format torch.cuda.memory._dump_snapshot writes (tests/support/snapshots.py):
alloc / free_requested / free_completed events over reused addresses, written once to a temporary file.
Two kinds: stacks on every 1000th allocation (a shared frame list, as small as a stackless trace), and every
allocation with a 5-frame stack of its own (the heaviest a `stacks="python"` recording gets per event here).

- read: `read_snapshot` (restricted unpickling + replay + summary), median of --repeats; target < 5 s.
- window: File > Open memory snapshot's window, from `open_file` until `loaded` (reading in its background
  thread, the plot's first decimated draw and the table), median of --repeats.
- redraw: the timeline plot zoomed to show all, 100k, 10k, 1k and 100 events: decimation of the visible range to
  the plot's width + setData + a synchronous repaint, median of 30 redraws each; target < 50 ms at any zoom.

Medians of repeats measured in one run; the machine is shared (2 cores): the min..max says how far to trust them.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from PySide6.QtWidgets import QApplication  # noqa: E402

from gpu_train_monitor.gui.memory.snapshot_window import SnapshotWindow  # noqa: E402
from gpu_train_monitor.memory.snapshot_reader import read_snapshot  # noqa: E402
from tests.support import snapshots  # noqa: E402

ZOOMS = (None, 100_000, 10_000, 1_000, 100)


def own_stacks(data: dict) -> dict:
    """Every allocation with a stack of its own objects (as torch's pickle has), not one shared list."""
    for event in data["device_traces"][0]:
        if event["action"] == "alloc":
            event["frames"] = copy.deepcopy(snapshots.USER_STACK)
    return data


def timed(fn, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return times


def window_open(app: QApplication, path: Path) -> float:
    window = SnapshotWindow()
    window.resize(1100, 760)
    window.show()
    app.processEvents()
    done = []
    window.loaded.connect(lambda: done.append(time.perf_counter()))
    window.load_failed.connect(lambda message: sys.exit(f"could not open {path}: {message}"))
    started = time.perf_counter()
    window.open_file(str(path))
    while not done:
        app.processEvents()
        time.sleep(0.001)
    elapsed = done[0] - started
    window.close()
    window.deleteLater()
    app.processEvents()
    return elapsed


def redraw_times(app: QApplication, path: Path, redraws: int = 30) -> dict[str, list[float]]:
    window = SnapshotWindow()
    window.resize(1100, 760)
    window.show()
    window.loaded.connect(lambda: None)
    window.open_file(str(path))
    while window.reading is None:
        app.processEvents()
        time.sleep(0.001)
    plot = window.plot
    events = window.reading.summary.events
    peak = max(window.reading.summary.peak_event, 0)
    results: dict[str, list[float]] = {}
    for span in ZOOMS:
        item = plot.plot.getPlotItem()
        if span is None:
            item.enableAutoRange()
            label = f"all {events:,} events"
        else:
            lo = min(max(peak - span // 2, 0), max(events - span, 0))
            item.setXRange(lo, lo + span, padding=0)
            label = f"{span:,} events"
        app.processEvents()
        times = []
        for _ in range(redraws):
            started = time.perf_counter()
            plot.redraw()
            plot.plot.viewport().repaint()  # paints now, not at the next pass of the event loop
            times.append(time.perf_counter() - started)
        results[label] = times
    window.close()
    app.processEvents()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as folder:
        kinds = {
            "stacks on every 1000th allocation": snapshots.training_like(args.events, frames_every=1000),
            "a 5-frame stack of its own on every allocation": own_stacks(snapshots.training_like(args.events)),
        }
        for kind, data in kinds.items():
            path = snapshots.write(Path(folder) / "snapshot.pickle", data)
            del data
            size_mb = path.stat().st_size / 1e6
            reads = timed(lambda p=path: read_snapshot(p), args.repeats)
            rows.append({"what": f"read {args.events:,} events, {kind} ({size_mb:.0f} MB file)", "s": reads})
            opens = [window_open(app, path) for _ in range(args.repeats)]
            rows.append({"what": f"open in the window, {kind}", "s": opens})
            if kind.startswith("stacks on every"):
                for label, times in redraw_times(app, path).items():
                    rows.append({"what": f"redraw, {label} visible", "ms": [t * 1000 for t in times]})
        kinds.clear()
    print(f"{'measurement':<90} {'median':>10} {'min..max':>20}")
    for row in rows:
        unit = "s" if "s" in row else "ms"
        values = row[unit]
        row["median"] = statistics.median(values)
        spread = f"{min(values):.3g}..{max(values):.3g} ({len(values)})"
        print(f"{row['what']:<90} {row['median']:>8.3g} {unit:<2} {spread:>20}")
    if args.json:
        Path(args.json).write_text(json.dumps({"events": args.events, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
