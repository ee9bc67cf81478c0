"""The Step time tab fed through the event display (as the live and a recorded run's window feed it): a stacked bar
per timed report, the latest split as numbers, the verdict with what to try, a one-line note for a run whose
reports carry no phases, and thousands of reports drawn as a few hundred bars."""

from __future__ import annotations

import numpy as np
import pytest

from gpu_train_monitor.events.events import STEP_PHASES, StepPhases, StepsReported
from gpu_train_monitor.gui.plots.loss_plot import LossPlot
from gpu_train_monitor.gui.plots.memory_plot import MemoryPlot
from gpu_train_monitor.gui.views.breakdown_view import BreakdownView
from gpu_train_monitor.gui.views.event_display import EventDisplay
from gpu_train_monitor.gui.views.log_panel import LogPanel
from gpu_train_monitor.gui.views.step_time_view import StepTimeView, aggregate

DATA_HEAVY = StepPhases((0.060, 0.010, 0.010, 0.012, 0.004, 0.004), 0.100)  # 70% waiting for data
COMPUTE_HEAVY = StepPhases((0.001, 0.001, 0.030, 0.050, 0.010, 0.002), 0.094)


def report(step: int, phases: StepPhases | None) -> StepsReported:
    return StepsReported(
        step=step,
        epoch=1,
        first_step=step - 9,
        losses=(1.0,) * 10,
        samples=32 * step,
        samples_per_s=100.0,
        elapsed_s=step / 10,
        eta_s=None,
        batch_size=32,
        memory=None,
        total_steps=10_000,
        phases=phases,
    )


@pytest.fixture
def shown(qtbot) -> EventDisplay:
    view = StepTimeView()
    qtbot.addWidget(view)
    view.resize(900, 280)
    view.show()
    qtbot.waitExposed(view)
    return EventDisplay(LossPlot(), MemoryPlot(), BreakdownView(), LogPanel(), view)


def stacked(view: StepTimeView) -> list[tuple[list[float], list[float]]]:
    """Each phase's bars: (bottoms, heights)."""
    return [(list(bar.opts["y0"]), list(bar.opts["height"])) for bar in view.bars]


def test_reports_with_phases_show_stacked_bars_and_the_latest_split_in_numbers(shown):
    view = shown.step_time
    assert shown.show_event(report(10, None))  # the run's first report: never timed
    assert shown.show_event(report(20, COMPUTE_HEAVY))
    assert shown.show_event(report(30, DATA_HEAVY))
    assert view.refresh()
    assert view.bar_count() == 2
    bars = stacked(view)
    assert list(view.bars[0].opts["x"]) == [20.0, 30.0]
    assert list(view.bars[0].opts["x1"] - view.bars[0].opts["width"]) == pytest.approx([11.0, 21.0])  # steps 10-20
    assert list(view.bars[0].opts["x1"]) == pytest.approx([19.0, 29.0])  # and 20-30, a gap of 2 steps between
    assert [heights[1] for _, heights in bars] == pytest.approx([1000 * s for s in DATA_HEAVY.seconds])
    assert [bottoms[1] for bottoms, _ in bars] == pytest.approx(np.cumsum([0, 60, 10, 10, 12, 4]))  # stacked
    assert len({bar.opts["brush"].color().name() for bar in view.bars}) == len(STEP_PHASES)  # a colour per phase
    assert [label.text for _, label in view.legend.items] == list(STEP_PHASES)
    assert [sample.item for sample, _ in view.legend.items] == view.bars  # each swatch in its bar's colour
    assert view.phase_labels["data"][1].text() == "60.0 ms" and view.phase_labels["data"][2].text() == "60%"
    assert view.phase_labels["step"][1].text() == "100.0 ms"
    assert view.note.isHidden() and view.plot.isVisible()


def test_the_verdict_reads_input_bound_for_a_data_heavy_split_and_says_what_to_try(shown):
    shown.show_event(report(20, COMPUTE_HEAVY))
    assert shown.step_time.verdict.text().startswith("compute-bound: ")
    shown.show_event(report(30, DATA_HEAVY))
    text = shown.step_time.verdict.text()
    assert text.startswith("input-bound: the training waits for its data 70% of each step")
    assert "resident placement" in text and "pin_memory" in text


def test_a_run_without_phases_says_so_in_one_line_instead_of_an_empty_plot(shown):
    view = shown.step_time
    assert "No step time yet" in view.note.text() and view.plot.isHidden()
    for step in (10, 20, 30):  # a watched script's reports: never timed
        shown.show_event(report(step, None))
    assert view.note.isVisible() and view.plot.isHidden()
    assert view.note.text() == "This run's reports carry no step phases: its step time cannot be split."
    assert view.verdict.text() == "" and view.bar_count() == 0


def test_a_new_run_clears_the_bars_and_the_split(shown):
    view = shown.step_time
    shown.show_event(report(20, DATA_HEAVY))
    view.refresh()
    view.clear()
    view.refresh()
    assert view.bar_count() == 0 and view.verdict.text() == "" and view.note.isVisible()


def test_thousands_of_reports_are_drawn_as_a_few_hundred_averaged_bars(shown):
    view = shown.step_time
    for step in range(10, 50_010, 10):  # 5000 reports
        shown.show_event(report(step, DATA_HEAVY if step % 20 else COMPUTE_HEAVY))
    assert view.refresh()
    assert 50 <= view.bar_count() <= view.plot.width() // 2
    total = np.sum([heights for _, heights in stacked(view)], axis=0)  # an average of the two splits' sums
    assert total == pytest.approx(
        np.full(len(total), 1000 * (sum(DATA_HEAVY.seconds) + sum(COMPUTE_HEAVY.seconds)) / 2)
    )


def test_aggregate_averages_groups_and_keeps_a_short_tail():
    x, ys = aggregate(np.arange(7.0), np.vstack([np.arange(7.0), np.ones(7)]), 3)
    assert list(x) == [1.0, 4.0, 6.0] and list(ys[0]) == [1.0, 4.0, 6.0] and list(ys[1]) == [1.0, 1.0, 1.0]


def test_hidden_it_draws_nothing_and_catches_up_when_shown(shown, qtbot):
    view = shown.step_time
    view.hide()
    shown.show_event(report(20, DATA_HEAVY))
    assert not view.refresh() and view.bar_count() == 0
    view.show()
    qtbot.waitUntil(lambda: view.bar_count() == 1)


def test_reports_spaced_unevenly_give_bars_as_wide_as_the_steps_they_cover(shown):
    """A machine that slowed down, or a loop that evaluated between two reports: no hole between their bars."""
    view = shown.step_time
    for step in (20, 24, 40, 44):
        assert shown.show_event(report(step, COMPUTE_HEAVY))
    assert view.refresh()
    bar = view.bars[0]
    left, right = bar.opts["x1"] - bar.opts["width"], bar.opts["x1"]
    assert list(right - left) == pytest.approx([3.2, 3.2, 12.8, 3.2])  # 80% of 4, 4, 16 and 4 steps
    assert all(0 < gap <= 0.2 * 16 + 1e-9 for gap in left[1:] - right[:-1])  # each gap a fifth of a bar's steps
