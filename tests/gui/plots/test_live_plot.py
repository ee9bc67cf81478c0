"""Live plots: an auto-range that holds still while new data fits (axes not rebuilt every report), grows
to show everything when it does not, yields to the user's zoom; decimated drawing; hidden plots skipped."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest

from gpu_train_monitor.gui.plots.live_plot import LiveViewBox, draw_decimated, is_shown, live_plot_widget, set_curves
from gpu_train_monitor.gui.plots.ring_buffer import RingBuffer


@pytest.fixture
def widget(qtbot) -> pg.PlotWidget:
    widget = live_plot_widget()
    qtbot.addWidget(widget)
    widget.resize(600, 300)
    widget.show()
    return widget


def view(widget: pg.PlotWidget) -> LiveViewBox:
    return widget.getPlotItem().getViewBox()


def show_steps(widget: pg.PlotWidget, curve: pg.PlotDataItem, last: int, low: float = 1.0) -> None:
    """A loss-like series over steps 1..last, drawn (the auto-range runs as the plot paints)."""
    x = np.arange(1, last + 1, dtype=float)
    curve.setData(x, low + 1.0 / x)
    widget.viewport().repaint()


def count_tick_rebuilds(axis: pg.AxisItem) -> list[int]:
    calls: list[int] = []
    original = axis.generateDrawSpecs
    axis.generateDrawSpecs = lambda painter: calls.append(1) or original(painter)
    return calls


def test_new_data_inside_the_range_leaves_the_range_and_the_axes_alone(widget):
    curve = widget.plot()
    show_steps(widget, curve, 100)
    (x0, x1), y_range = view(widget).viewRange()
    assert x0 <= 1 and 100 < x1 <= 140  # everything shown, with room to grow to the right
    rebuilds = [count_tick_rebuilds(widget.getPlotItem().getAxis(name)) for name in ("bottom", "left")]
    for last in (105, 110, 120):  # later reports: still inside
        show_steps(widget, curve, last)
        assert view(widget).viewRange() == [[x0, x1], y_range]
    assert rebuilds == [[], []]  # the axes kept their ticks and text


def test_data_past_the_range_grows_it_to_show_everything(widget):
    curve = widget.plot()
    show_steps(widget, curve, 100)
    rebuilds = count_tick_rebuilds(widget.getPlotItem().getAxis("bottom"))
    show_steps(widget, curve, 200)
    assert rebuilds  # new ticks for the new range
    x0, x1 = view(widget).viewRange()[0]
    assert x0 <= 1 and 200 < x1 <= 280  # a quarter more than the data, plus pyqtgraph's padding
    show_steps(widget, curve, 200, low=-5.0)  # a loss far below the held range: y follows too
    assert view(widget).viewRange()[1][0] <= -5.0 + 1 / 200


def test_a_much_shorter_series_is_refitted_not_left_in_a_corner(widget):
    curve = widget.plot()
    show_steps(widget, curve, 10_000)
    show_steps(widget, curve, 20)  # a new run
    assert view(widget).viewRange()[0][1] < 40


def test_headroom_does_not_invent_negative_values(widget):
    curve = widget.plot()
    curve.setData(np.arange(1.0, 101.0), np.linspace(0.05, 2.0, 100))
    widget.viewport().repaint()
    assert view(widget).held_range(1)[0] == 0.0  # not 0.05 - 10% of the span
    assert view(widget).held_range(0)[0] >= 0.0


def test_the_users_zoom_is_kept_and_auto_range_fits_again_when_asked(widget):
    curve = widget.plot()
    show_steps(widget, curve, 1000)
    view(widget).setXRange(100, 200)  # the user zooms: following stops
    zoomed = view(widget).viewRange()[0]
    show_steps(widget, curve, 5000)
    assert view(widget).viewRange()[0] == zoomed
    view(widget).enableAutoRange()  # the A button
    widget.viewport().repaint()
    assert view(widget).viewRange()[0][1] >= 5000


def test_draw_decimated_bounds_the_points_and_follows_the_zoom(widget):
    shown, hidden = widget.plot(), widget.plot()
    hidden.setData([0.0, 1.0], [5.0, 5.0])
    hidden.hide()
    x = np.arange(100_000, dtype=float)
    ys = np.vstack([np.sin(x / 100), np.cos(x / 100)])
    data = RingBuffer(200_000, 3)
    data.extend(np.column_stack([x, ys[0], ys[1]]))
    draw_decimated(widget, [shown, hidden], data)
    drawn_x, drawn_y = shown.getData()
    assert len(drawn_x) <= 2 * 600 + 100_000 // 600 + 1  # about 2 points per pixel column
    assert drawn_y.max() == ys[0].max() and drawn_y.min() == ys[0].min()  # peaks kept
    assert list(hidden.getData()[1]) == [5.0, 5.0]  # a hidden curve is not redrawn
    view(widget).setXRange(1000, 2000, padding=0)
    draw_decimated(widget, [shown, hidden], data)
    drawn_x = shown.getData()[0]
    assert drawn_x[0] >= 999 and drawn_x[-1] <= 2001  # only the visible part, at full detail
    assert len(drawn_x) == 1003


def test_is_shown_only_when_a_redraw_could_be_seen(qtbot, widget):
    assert is_shown(widget)
    widget.hide()
    assert not is_shown(widget)
    widget.show()
    widget.resize(0, 300)  # a splitter collapsed it
    assert not is_shown(widget)


def test_a_range_move_rebuilds_the_axes_with_the_data_not_in_the_paint(widget):
    curve = widget.plot()
    x = np.arange(1, 101, dtype=float)
    set_curves(widget, [curve], x, (1 + 1 / x)[np.newaxis])
    widget.viewport().repaint()
    rebuilds = [count_tick_rebuilds(widget.getPlotItem().getAxis(name)) for name in ("bottom", "left")]
    x = np.arange(1, 1001, dtype=float)
    set_curves(widget, [curve], x, (-1 + 1 / x)[np.newaxis])  # past the range in x and y
    assert rebuilds == [[1], [1]]  # new ticks already, in this (timer) event
    assert view(widget).viewRange()[0][1] >= 1000
    widget.viewport().repaint()
    assert rebuilds == [[1], [1]]  # the paint only draws
