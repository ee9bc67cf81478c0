"""The loss plot: per-step loss, bias-corrected EMA, NaN tolerance, log scale, epoch markers, accuracy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpu_train_monitor.gui.plots.loss_plot import LossPlot
from tests.support.ema_reference import reference as reference_ema  # the step-by-step definition, kept once


@pytest.fixture
def plot(qtbot) -> LossPlot:
    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.resize(800, 500)
    plot.show()
    return plot


def drawn(curve) -> tuple[np.ndarray, np.ndarray]:
    x, y = curve.getData()
    return (np.array([]), np.array([])) if x is None else (np.asarray(x), np.asarray(y))


def test_ema_is_bias_corrected_from_the_first_step(plot):
    plot.smoothing.setValue(0.9)
    plot.add_losses(1, (2.0, 2.0, 2.0))
    assert list(plot.data.column(2)) == pytest.approx([2.0, 2.0, 2.0])  # not 0.2, 0.38, ... (uncorrected)


def test_ema_matches_the_debiased_formula_across_reports(plot):
    plot.smoothing.setValue(0.6)
    losses = [2.3, 2.1, 1.7, 1.9, 1.2, 0.8, 0.9]
    plot.add_losses(1, tuple(losses[:3]))
    plot.add_losses(4, tuple(losses[3:]))  # a second report continues the same EMA
    assert list(plot.data.column(0)) == list(range(1, 8))
    assert list(plot.data.column(2)) == pytest.approx(reference_ema(losses, 0.6))


def test_changing_the_smoothing_recomputes_the_kept_history(plot):
    losses = [2.0, 1.0, 3.0, 0.5]
    plot.add_losses(1, tuple(losses))
    plot.smoothing.setValue(0.0)  # no smoothing: the EMA is the loss itself
    assert list(plot.data.column(2)) == losses
    plot.smoothing.setValue(0.5)
    assert list(plot.data.column(2)) == pytest.approx(reference_ema(losses, 0.5))
    assert list(plot.data.column(0)) == [1, 2, 3, 4]


def test_nan_and_inf_losses_do_not_break_the_redraw(plot):
    plot.smoothing.setValue(0.5)
    plot.add_losses(1, (float("nan"), 2.0, float("inf"), 1.0, float("nan")))
    assert plot.refresh()
    ema = plot.data.column(2)
    assert math.isnan(ema[0])  # nothing to average yet
    assert ema[2] == ema[1] and ema[4] == ema[3]  # a non-finite loss leaves the EMA where it was
    assert ema[3] == pytest.approx(reference_ema([2.0, 1.0], 0.5)[-1])
    x, y = drawn(plot.raw_curve)
    assert list(x) == [1, 2, 3, 4, 5]
    assert y[1] == 2.0 and y[3] == 1.0
    plot.add_losses(6, (0.5,))  # and it keeps drawing after them
    assert plot.refresh()
    assert drawn(plot.raw_curve)[1][-1] == 0.5


def test_redraw_happens_only_when_data_changed(plot):
    plot.add_losses(1, (1.0,))
    assert plot.refresh() is True
    assert plot.refresh() is False
    plot.add_losses(2, (0.9,))
    assert plot.refresh() is True


def test_log_scale_toggle_switches_the_axis_and_hides_non_positive_losses(plot):
    plot.add_losses(1, (10.0, 1.0, 0.0, 0.1))
    plot.refresh()
    plot.log_scale.setChecked(True)
    item = plot.plot.getPlotItem()
    assert item.getAxis("left").logMode
    assert plot.refresh()  # toggling redraws
    x, y = drawn(plot.raw_curve)
    assert list(y[[0, 1, 3]]) == pytest.approx([1.0, 0.0, -1.0])  # log10 of the loss
    assert math.isnan(y[2])  # log(0) is hidden, not -inf
    plot.log_scale.setChecked(False)
    assert not item.getAxis("left").logMode
    plot.refresh()
    assert list(drawn(plot.raw_curve)[1]) == [10.0, 1.0, 0.0, 0.1]


def test_epoch_markers_and_validation_accuracy(plot):
    plot.add_epoch_end(1, 50, 0.42)
    plot.add_epoch_end(2, 100, None)  # no validation data: a marker, no accuracy point
    plot.add_epoch_end(3, 150, 0.61)
    lines = plot._epoch_lines
    assert [line.value() for line in lines] == [50, 100, 150]
    assert [line.label.textItem.toPlainText() for line in lines] == ["epoch 1", "epoch 2", "epoch 3"]
    assert all(line in plot.plot.getPlotItem().items for line in lines)
    x, y = drawn(plot.val_curve)
    assert list(x) == [1, 3]
    assert list(y) == pytest.approx([42.0, 61.0])  # percent


def test_clear_starts_a_new_run_with_nothing_left_over(plot):
    plot.smoothing.setValue(0.9)
    plot.add_losses(1, (5.0, 4.0))
    plot.add_epoch_end(1, 2, 0.3)
    lines = list(plot._epoch_lines)
    plot.clear()
    assert len(plot.data) == 0
    assert all(line not in plot.plot.getPlotItem().items for line in lines)
    assert len(drawn(plot.val_curve)[0]) == 0
    plot.add_losses(1, (1.0,))
    assert plot.data.last(2) == pytest.approx(1.0)  # the EMA starts afresh, not from the old run
    assert plot.refresh()
    assert list(drawn(plot.raw_curve)[0]) == [1]


def test_a_hidden_plot_is_not_redrawn_until_it_is_shown(plot):
    plot.add_losses(1, (1.0, 0.9))
    assert plot.refresh()
    plot.hide()  # e.g. the window minimised to a hidden state, or the plot's pane closed
    plot.add_losses(3, (0.8,))
    assert plot.refresh() is False
    assert list(drawn(plot.raw_curve)[0]) == [1, 2]  # untouched while hidden
    plot.show()
    assert plot.refresh() is True  # the steps that arrived meanwhile are drawn once it is back
    assert list(drawn(plot.raw_curve)[0]) == [1, 2, 3]


def test_reports_inside_the_shown_steps_do_not_move_the_axes(plot):
    view = plot.plot.getPlotItem().getViewBox()
    plot.add_losses(1, tuple(np.linspace(2.3, 1.5, 200)))
    plot.refresh()
    plot.plot.viewport().repaint()
    shown = view.viewRange()
    for first in range(201, 241, 10):  # four more reports, still inside the room the range left
        plot.add_losses(first, tuple(np.linspace(1.6, 1.55, 10)))
        assert plot.refresh()
        plot.plot.viewport().repaint()
        assert view.viewRange() == shown
    assert drawn(plot.raw_curve)[0][-1] == 240 <= shown[0][1]  # and the newest step is on screen


def test_a_million_steps_are_drawn_as_a_few_thousand_points_with_their_spikes(plot):
    losses = np.full(1_000_000, 1.0)
    losses[123_456] = 40.0  # one diverging step
    plot.add_losses(1, tuple(losses))
    assert plot.refresh()
    x, y = drawn(plot.raw_curve)
    assert len(x) <= 2 * max(plot.plot.width(), 200) + 1_000_000 // 200
    assert y.max() == 40.0


def test_one_marker_per_epoch_at_its_real_end(plot):
    plot.add_epoch_end(1, 30, 0.20, complete=False)  # --max-steps 30 ended the run inside epoch 1
    assert plot._epoch_lines == []  # no marker where the steps, not the data, ran out
    plot.add_epoch_end(1, 50, 0.30)  # a resume from step 30 finished epoch 1
    plot.add_epoch_end(1, 50, 0.30)  # and the same end read again (the recorded run, then the live one)
    plot.add_epoch_end(2, 100, 0.40)
    assert [(line.value(), line.label.textItem.toPlainText()) for line in plot._epoch_lines] == [
        (50, "epoch 1"),
        (100, "epoch 2"),
    ]
    assert sum(isinstance(i, type(plot._epoch_lines[0])) for i in plot.plot.getPlotItem().items) == 2
    x, y = drawn(plot.val_curve)
    assert list(x) == [1, 2] and list(y) == pytest.approx([30.0, 40.0])  # epoch 1's accuracy once, the latest


def visible_label_rects(plot):
    from PySide6.QtCore import QRectF

    rects = []
    for line in plot._epoch_lines:
        if line.label.isVisible():
            text = line.label.textItem
            margin = text.document().documentMargin()  # blank: the glyphs are what must show whole
            rects.append(text.mapRectToScene(QRectF(text.boundingRect()).adjusted(margin, margin, -margin, -margin)))
    return rects


def test_epoch_labels_never_overlap_and_stay_inside_the_plot(plot, qtbot):
    plot.add_losses(1, tuple(1.0 / (1 + i) for i in range(2000)))
    for epoch in range(1, 21):  # 20 epochs of 100 steps on an 800-pixel plot
        plot.add_epoch_end(epoch, 100 * epoch, None)
    plot.refresh()
    qtbot.wait(50)
    plot.thin_epoch_labels()
    rects = visible_label_rects(plot)
    assert 2 <= len(rects) < 20  # thinned, not all gone
    assert all(not a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1 :])
    view = plot.plot.getPlotItem().getViewBox()
    inside = view.mapRectToScene(view.boundingRect())
    assert all(inside.contains(rect) for rect in rects)  # not cut at the top ("epocn 1")
    view.setXRange(0, 2010, padding=0)  # the last epoch at the right edge: its label goes left of its line
    plot.thin_epoch_labels()
    inside = view.mapRectToScene(view.boundingRect())
    rects = visible_label_rects(plot)
    assert plot._epoch_lines[-1].label.isVisible() and all(inside.contains(rect) for rect in rects)
    assert all(not a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1 :])
    view.setXRange(0, 400, padding=0)  # zoomed in: room for every label
    plot.thin_epoch_labels()
    assert plot.epoch_label_stride() == 1


def test_the_legend_is_above_the_data_not_over_it(plot):
    plot.add_losses(1, tuple(3.0 - i * 0.001 for i in range(2000)))  # a curve along the top right
    plot.refresh()
    item = plot.plot.getPlotItem()
    view = item.getViewBox()
    legend = item.legend
    data_area = view.mapRectToScene(view.boundingRect())
    assert legend.isVisible() and len(legend.items) == 2
    assert not legend.mapRectToScene(legend.boundingRect()).intersects(data_area)


def test_a_loss_between_0_70_and_0_76_reads_as_plain_numbers(plot, qtbot):
    """The axis read "700-760" under "loss (x0.001)": pyqtgraph scales a unitless axis below 1 by default."""
    plot.add_losses(1, tuple(0.70 + 0.06 * i / 99 for i in range(100)))
    plot.refresh()
    item = plot.plot.getPlotItem()
    item.getViewBox().autoRange()
    axis = item.getAxis("left")
    low, high = axis.range
    ticks = [
        text for spacing, values in axis.tickValues(low, high, 400) for text in axis.tickStrings(values, 1, spacing)
    ]
    assert "x0.001" not in axis.labelString() and axis.autoSIPrefixScale == 1.0
    assert ticks and all(0.6 <= float(text) <= 0.8 for text in ticks), ticks
