"""The snapshot timeline plot: per-pixel decimation at any zoom, the peak marked."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from gpu_train_monitor.gui.plots.snapshot_plot import SnapshotTimelinePlot


def test_a_million_points_draw_as_a_few_per_pixel_and_keep_the_peak(qtbot):
    plot = SnapshotTimelinePlot()
    qtbot.addWidget(plot)
    plot.resize(800, 400)
    plot.show()
    rng = np.random.default_rng(0)
    live = np.cumsum(rng.integers(-100, 101, 1_000_000)) + 10**8
    reserved = np.maximum.accumulate(live) + 1000
    peak = int(np.argmax(live))
    plot.set_timeline(live, reserved, peak)
    buckets = max(plot.plot.width(), 200)
    assert plot.points_drawn() <= 2 * buckets + 1_000_000 // buckets + 1  # a min and a max per column, a tail
    assert plot.live_curve.getData()[1].max() == live.max()
    assert plot.reserved_curve.getData()[1].max() == reserved.max()
    assert plot.peak_line.value() == peak and "peak" in plot.peak_line.label.format
    plot.plot.getPlotItem().setXRange(peak - 50, peak + 50, padding=0)
    plot.redraw()
    x, y = plot.live_curve.getData()
    assert len(x) <= 103 and live[peak] in y


def test_an_empty_timeline_draws_nothing(qtbot):
    plot = SnapshotTimelinePlot()
    qtbot.addWidget(plot)
    plot.set_timeline(np.zeros(0), np.zeros(0), -1)
    assert plot.points_drawn() == 0 and not plot.peak_line.isVisible()


def test_pointing_at_the_timeline_reads_the_bytes_at_that_event(qtbot):
    plot = SnapshotTimelinePlot()
    qtbot.addWidget(plot)
    plot.resize(800, 400)
    plot.show()
    plot.set_timeline(np.array([1_000_000, 3_000_000, 2_000_000]), np.array([4_000_000] * 3), 1)
    qtbot.waitExposed(plot)
    view = plot.plot.getPlotItem().getViewBox()
    plot._on_mouse_moved(view.mapViewToScene(pg.Point(1.2, 2_000_000)))  # the scene position of event 1.2
    assert plot.readout.text() == "after event 1: 3.00 MB live, 4.00 MB reserved"
    assert plot.read_out(2) == "after event 2: 2.00 MB live, 4.00 MB reserved"
