"""The breakdown tab's step timeline: a prediction's drawn stacked by holder until a measured (CUDA) one comes, phase
ends and the peak marked, the point under the mouse read out in the locale's digits, the colouring by module on
demand, the CUDA-only note elsewhere, and a measured timeline read back from the store."""

from __future__ import annotations

import dataclasses
import json

import pyqtgraph as pg
from PySide6.QtCore import QLocale

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.events.events import MemoryBreakdown
from gpu_train_monitor.events.module_bytes import OUTSIDE
from gpu_train_monitor.events.step_timeline import StepTimeline, TimelinePoint
from gpu_train_monitor.gui.history.feed import rebuild_event
from gpu_train_monitor.gui.plots.step_timeline_plot import OUTSIDE_COLOUR
from gpu_train_monitor.gui.views.breakdown_view import BreakdownView
from gpu_train_monitor.store.run_writes import event_data

MB = 1_000_000


def a_step(scale: int = 1) -> StepTimeline:
    """Forward saving 3 MB a block over two blocks, backward making gradients and freeing them, an optimizer."""
    points, index = [], 0

    def add(phase: str, module: str, activations: int, grads: int, temporaries: int = 0) -> None:
        nonlocal index
        points.append(TimelinePoint(index, phase, module, 4 * MB, grads, 4 * MB, MB, activations * scale, temporaries))
        index += 1 if index < 2 else 1000  # uneven steps, as merged points are

    add("forward", OUTSIDE, 0, 0)
    add("forward", "layer1", 3 * MB, 0)
    add("forward", "layer2", 6 * MB, 0, MB)
    add("backward", "layer2", 3 * MB, 2 * MB)
    add("backward", "layer1", 0, 4 * MB)
    add("optimizer", OUTSIDE, 0, 4 * MB)
    return StepTimeline(tuple(points), (("forward", 2), ("backward", 4), ("optimizer", 5)), 6000)


def shown_items(view: BreakdownView, kind: type) -> list[object]:
    return [item for item in view.timeline.plot.plot.getPlotItem().items if isinstance(item, kind)]


def test_a_prediction_is_drawn_stacked_by_holder_with_its_phases_and_peak(qtbot) -> None:
    view = BreakdownView()
    qtbot.addWidget(view)
    view.set_device_kind("cpu")
    timeline = view.timeline
    assert timeline.isHidden()
    timeline.offer_predicted(a_step(), 64)
    assert not timeline.isHidden() and "predicted at batch 64" in timeline.caption.text()
    assert "CUDA only" in timeline.note.text() and not timeline.note.isHidden()
    assert len(shown_items(view, pg.FillBetweenItem)) == 6  # parameters at the bottom ... temporaries on top
    legend = [label.text for _, label in timeline.plot.legend.items]
    assert legend[0] == "parameters" and legend[-1] == "temporaries" and len(legend) == 6
    lines = [line.label.format for line in shown_items(view, pg.InfiniteLine)]
    peak = a_step().peak
    assert peak is not None and peak.total_bytes == 16 * MB
    assert lines == ["forward ends", "backward ends", "optimizer ends", f"peak {format_bytes(16 * MB)}"]
    tops = [item for item in shown_items(view, pg.PlotDataItem) if item.yData is not None and len(item.yData)]
    assert max(tops[-1].yData) == 16 * MB  # the stack's top is the total


def test_the_point_under_the_mouse_is_read_out_in_the_locales_digits(qtbot) -> None:
    view = BreakdownView()
    qtbot.addWidget(view)
    view.timeline.offer_predicted(a_step(), 8)
    plot = view.timeline.plot
    point = plot.point_at(1500.0)  # between the points at 1002 and 2002: the one at 1002 is in force
    assert point is not None and point.index == 1002
    before = QLocale()
    QLocale.setDefault(QLocale(QLocale.Language.German, QLocale.Country.Germany))
    try:
        text = plot.read_out(point)
    finally:
        QLocale.setDefault(before)
    assert text.startswith("After allocation or free 1.002 (backward, layer2): ")
    assert f"gradients {format_bytes(2 * MB)}" in text and f"{format_bytes(14 * MB)} live" in text
    assert plot.point_at(-5.0) is None and plot.point_at(10**9).index == 3002


def test_colouring_by_module_draws_a_bar_per_point_in_its_blocks_colour(qtbot) -> None:
    view = BreakdownView()
    qtbot.addWidget(view)
    view.timeline.offer_predicted(a_step(), 8)
    view.timeline.by_module.setChecked(True)
    (bars,) = shown_items(view, pg.BarGraphItem)
    assert not shown_items(view, pg.FillBetweenItem)
    colours = [brush.color().getRgb()[:3] for brush in bars.opts["brushes"]]
    plot = view.timeline.plot
    assert colours[0] == OUTSIDE_COLOUR and colours[1] == plot.module_colour("layer1") != plot.module_colour("layer2")
    assert list(bars.opts["height"]) == [p.total_bytes for p in a_step().points]
    assert [label.text for _, label in plot.legend.items] == ["layer1", "layer2", "outside modules"]
    view.timeline.by_module.setChecked(False)
    assert len(shown_items(view, pg.FillBetweenItem)) == 6 and not shown_items(view, pg.BarGraphItem)


def test_a_measured_timeline_replaces_the_prediction_and_comes_back_from_the_store(qtbot) -> None:
    view = BreakdownView()
    qtbot.addWidget(view)
    view.set_device_kind("cuda")
    view.timeline.offer_predicted(a_step(), 8)
    assert "Predicted until a step is measured" in view.timeline.note.text()
    plain = MemoryBreakdown(2, 10, 10, 10, 10, 10, 0, (("forward", 1),), "allocator")
    measured = dataclasses.replace(plain, step=3, timeline=a_step(scale=2))
    stored = rebuild_event("MemoryBreakdown", json.loads(json.dumps(event_data(measured))))  # as the store keeps it
    assert stored == measured
    view.show_breakdown(stored)
    assert "measured at step 3" in view.timeline.caption.text() and view.timeline.note.isHidden()
    view.timeline.offer_predicted(a_step(), 8)  # a later prediction does not replace the measured step
    view.show_breakdown(dataclasses.replace(plain, step=4))  # a step not recorded keeps the last one shown
    assert view.timeline.plot.timeline == a_step(scale=2)
    view.clear()
    assert view.timeline.isHidden() and view.timeline.measured is None
