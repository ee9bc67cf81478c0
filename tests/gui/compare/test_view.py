"""The compare view on its own, fed made-up events: what it draws, when it draws, and what it says."""

from __future__ import annotations

import dataclasses
import math

import pytest

from gpu_train_monitor.compare.plan import plan
from gpu_train_monitor.compare.result import ComparisonResult, ContenderResult
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.events.events import RunStarted, StepsReported
from gpu_train_monitor.gui.compare.view import CompareView

CONTENDERS = plan(
    RunConfig(device="cpu", model="tiny-cnn", max_steps=6), [{"placement": "stream"}, {"placement": "resident"}]
)


def report(first: int, losses: tuple[float, ...], elapsed: float, rate: float) -> StepsReported:
    last = first + len(losses) - 1
    return StepsReported(
        step=last,
        epoch=1,
        first_step=first,
        losses=losses,
        samples=32 * last,
        samples_per_s=rate,
        elapsed_s=elapsed,
        eta_s=None,
        batch_size=32,
        memory=None,
        total_steps=6,
    )


def started() -> RunStarted:
    return RunStarted(
        config={},
        device="cpu",
        device_name="cpu",
        placement="stream",
        steps_per_epoch=8,
        total_steps=6,
        train_samples=256,
        val_samples=256,
        parameters=1,
        dataset_bytes=1,
        memory=None,
    )


def run_result(
    index: int, rate: float | None, spread: tuple[float, float] | None, status: str = "completed", message: str = ""
) -> ContenderResult:
    return ContenderResult(
        index=index,
        label=CONTENDERS[index].label,
        overrides=CONTENDERS[index].overrides,
        status=status,
        samples_per_s=rate,
        samples_per_s_spread=spread,
        loss_last=1.5,
        warmup_steps=2,
        compile_s=None,
        wall_s=3.0,
        steps=6,
        message=message,
        losses=(),
    )


def result(agree: bool | None, runs: tuple[ContenderResult, ...]) -> ComparisonResult:
    return ComparisonResult(
        runs=runs,
        steps=6,
        model="tiny-cnn",
        batch_size=128,
        speedup=1.5,
        fastest=1,
        slowest=0,
        headline="resident trains tiny-cnn 1.50x faster than stream at batch 128; warm-up excluded",
        losses_agree=agree,
        agreement=""
        if agree is None
        else ("computed the same losses" if agree else "runs 1 and 2 computed different losses"),
        status="completed",
    )


@pytest.fixture
def view(qtbot) -> CompareView:
    view = CompareView()
    qtbot.addWidget(view)
    view.resize(900, 400)
    view.show()
    view.begin(CONTENDERS, 6, "stream vs resident")
    return view


def points(curve) -> list[float]:
    x, _ = curve.getData()
    return [] if x is None else list(x)


def test_each_run_races_from_its_own_start_with_a_live_median_and_spread(view):
    for index in (0, 1):
        view.add(index, started())
        view.add(index, report(1, (2.0, 1.9), 1.0, 50.0))  # warm-up: not a throughput sample
        view.add(index, report(3, (1.8, float("nan")), 2.0, 100.0 * (index + 1)))  # a NaN loss is kept as a gap
        view.add(index, report(5, (1.6, 1.5), 3.0, 120.0 * (index + 1)))
    view.draw_now()
    for curve in view.time_curves:  # both runs start at 0 s: the race is visible
        assert points(curve) == pytest.approx([0.5, 1.0, 1.5, 2.0, 2.5, 3.0])
    assert [points(c) for c in view.step_curves] == [[1, 2, 3, 4, 5, 6]] * 2
    _, y = view.step_curves[0].getData()
    assert math.isnan(y[3])
    assert view.bar_heights() == pytest.approx([110.0, 220.0])  # the median of the reports after the first
    assert view.run_lines()[1].startswith("2. resident: running, step 6 / 6, 220 images/s (p10 to p90: 204 to 236)")
    assert "6 steps each" in view.header.text()
    legend = [label.text for _, label in view.time_plot.getPlotItem().legend.items]
    assert legend == ["1. stream", "2. resident"]


def test_the_result_replaces_the_live_figures_and_a_disagreement_is_a_warning(view):
    view.add(0, started())
    view.add(0, report(1, (2.0,), 1.0, 10.0))
    view.finish(result(False, (run_result(0, 80.0, (70.0, 90.0)), run_result(1, 120.0, (110.0, 130.0)))))
    view.draw_now()
    assert view.bar_heights() == [80.0, 120.0]
    assert view.headline.text().startswith("resident trains tiny-cnn 1.50x faster")
    assert view.agreement.isVisible() and view.agreement.text() == "⚠ runs 1 and 2 computed different losses"
    assert view.agreement.property("warning") is True and "#b00020" in view.agreement.styleSheet()
    assert view.run_lines() == [
        "1. stream: completed, 80 images/s (p10 to p90: 70 to 90), 1.00x the slowest, last loss 1.5000",
        "2. resident: completed, 120 images/s (p10 to p90: 110 to 130), 1.50x the slowest, last loss 1.5000",
    ]

    view.begin(CONTENDERS, 6, "again")  # a new comparison starts clean
    view.finish(
        result(True, (run_result(0, 80.0, (70.0, 90.0)), run_result(1, None, None, "failed", "data_dir: missing")))
    )
    view.draw_now()
    assert view.agreement.text() == "computed the same losses" and view.agreement.property("warning") is False
    assert view.run_lines()[1] == "2. resident: failed: data_dir: missing"
    assert view.bar_heights() == [80.0, 0.0]


def test_nothing_is_drawn_while_hidden_and_it_catches_up_when_shown(qtbot, view):
    view.draw_now()
    view.hide()
    view.add(0, report(1, (2.0, 1.9), 1.0, 50.0))
    assert not view.refresh()  # hidden: no redraw, the data waits
    qtbot.waitUntil(lambda: not view.redraw.active, timeout=2000)  # its tick found the view hidden
    assert points(view.time_curves[0]) == []
    view.show()
    qtbot.waitUntil(
        lambda: len(points(view.time_curves[0])) == 2 and len(points(view.step_curves[0])) == 2, timeout=2000
    )
    qtbot.waitUntil(lambda: not view.redraw.active, timeout=2000)  # drawn: no ticks at rest


def test_every_text_goes_through_the_translator_whole(qtbot):
    from gpu_train_monitor.base.text import Message
    from tests.support.context_marks import marking_translator

    with marking_translator():
        view = CompareView()
        qtbot.addWidget(view)
        view.resize(900, 400)
        view.show()
        view.begin(CONTENDERS, 6, Message("stream vs resident"))  # a ready-made comparison's name, from core
        view.add(0, started())
        view.add(0, report(1, (2.0,), 1.0, 50.0))
        view.add(0, report(2, (1.9,), 2.0, 150.0))
        running = view.run_lines()
        stopped = result(None, (run_result(0, None, None, "stopped", "stopped by request"),))
        stopped = dataclasses.replace(
            stopped, headline=Message("no ratio: {why}", why="fewer than two runs finished"), status="stopped"
        )
        view.finish(stopped)
        lines = view.run_lines()
    assert view.time_plot.getPlotItem().titleLabel.text == "[CompareView]Loss against time"
    assert view.header.text().startswith("[CompareView]<b>[]stream vs resident</b>: 2 runs of tiny-cnn")
    assert running == [  # a label's words too: the placement as the form's combo says it
        "[compare_race]1. [form_widgets]stream: [status_text]running, [compare_race]step 2 / 6[compare_race], "
        "[compare_race]150 images/s (p10 to p90: 150 to 150)[compare_race], [compare_race]1.00x the "
        "slowest",
        "[compare_race]2. [form_widgets]resident: waits its turn",
    ]
    assert lines == [
        "[compare_race]1. [form_widgets]stream: [status_text]stopped: stopped by request",
        "[compare_race]2. [form_widgets]resident: [compare_race]not run: [compare_race]the comparison stopped "
        "before its turn",
    ]
    assert view.headline.text() == "[]no ratio: fewer than two runs finished"  # core's, from its template


def test_bars_are_named_by_their_runs_and_say_no_result_yet_before_the_first(view):
    view.draw_now()
    assert view.bar_labels() == ["stream", "resident"]  # not 1 and 2
    left = view.rate_plot.getPlotItem().getAxis("left")
    assert view.no_rate_text.isVisible() and not left.style["showValues"]  # no empty "-400..400" scale
    assert "no images/s yet" in view.no_rate_text.textItem.toPlainText()
    view.add(0, started())
    view.add(0, report(1, (2.0, 1.9), 1.0, 50.0))
    view.add(0, report(3, (1.8, 1.7), 2.0, 100.0))
    view.draw_now()
    assert not view.no_rate_text.isVisible() and left.style["showValues"] and not left.autoSIPrefix


def test_the_race_legend_is_above_the_data_not_over_it(view, qtbot):
    for index in (0, 1):
        view.add(index, started())
        view.add(index, report(1, (2.0, 1.9), 1.0, 50.0))
        view.add(index, report(3, (1.8, 1.7), 2.0, 100.0))
    view.draw_now()
    qtbot.wait(20)
    item = view.time_plot.getPlotItem()
    box = item.getViewBox()
    legend = item.legend
    assert [label.text for _, label in legend.items] == ["1. stream", "2. resident"]
    assert not legend.mapRectToScene(legend.boundingRect()).intersects(box.mapRectToScene(box.boundingRect()))


def test_a_difference_within_the_noise_gives_no_run_a_ratio(view):
    runs = (run_result(0, 128.0, (74.0, 182.0)), run_result(1, 112.0, (80.0, 155.0)))
    unclear = dataclasses.replace(
        result(None, runs), headline="no clear difference between stream and resident", clear_difference=False
    )
    view.finish(unclear)
    view.draw_now()
    assert view.headline.text() == "no clear difference between stream and resident"
    assert not any("the slowest" in line for line in view.run_lines())
    view.finish(dataclasses.replace(unclear, clear_difference=True))
    assert "1.14x the slowest" in view.run_lines()[0]


def test_each_run_s_step_time_split_shows_side_by_side_once_timed(view):
    from gpu_train_monitor.events.events import StepPhases

    stream = StepPhases((0.060, 0.010, 0.010, 0.012, 0.004, 0.004), 0.100)  # waits for its data
    resident = StepPhases((0.001, 0.001, 0.010, 0.012, 0.004, 0.002), 0.030)
    view.draw_now()
    assert view.phase_split.isHidden()  # nothing timed yet: no empty table
    for index, phases in enumerate((stream, resident)):
        view.add(index, started())
        view.add(index, report(1, (2.0, 1.9), 1.0, 50.0))  # the first report: never timed
        for first in (3, 5):
            view.add(index, dataclasses.replace(report(first, (1.8, 1.7), 2.0, 100.0), phases=phases))
    view.draw_now()
    split = view.phase_split
    assert split.isVisible() and split.rowCount() == 2
    assert [split.item(row, 0).text() for row in (0, 1)] == ["stream", "resident"]
    assert split.cell_text(0, "data") == "60.0 ms · 60%" and split.cell_text(1, "data") == "1.0 ms · 3%"
    assert split.cell_text(1, "backward") == "12.0 ms · 40%"
    last = split.columnCount() - 1
    assert [split.item(row, last).text() for row in (0, 1)] == ["input-bound", "compute-bound"]
