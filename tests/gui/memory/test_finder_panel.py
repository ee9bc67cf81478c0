"""The batch-size finder's plot: every text whole and inside the plot, the legend over no trial."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from PySide6.QtCore import QRectF

from gpu_train_monitor.gui.memory.finder_panel import FinderPanel


@pytest.fixture
def panel(qtbot) -> FinderPanel:
    panel = FinderPanel(lambda: None)
    qtbot.addWidget(panel)
    panel.resize(460, 260)  # a short window: the plot keeps room for its texts
    panel.show()
    panel.trials = [
        SimpleNamespace(batch_size=b, peak_bytes=None if b > 512 else int(3e8 + b * 2e6), fits=b <= 512)
        for b in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
    ]
    panel.result = SimpleNamespace(
        limit_bytes=int(1.3e9), fixed_bytes=int(3e8), bytes_per_sample=int(2e6), batch_size=512
    )
    panel._redraw()
    qtbot.wait(20)
    return panel


def scene_rect(item) -> QRectF:
    return item.mapRectToScene(item.boundingRect())


def glyphs_rect(text) -> QRectF:
    """A QGraphicsTextItem's text in scene coordinates, without its document's blank margin."""
    margin = text.document().documentMargin()
    return text.mapRectToScene(text.boundingRect().adjusted(margin, margin, -margin, -margin))


def test_the_legend_and_axis_title_are_whole_and_cover_no_trial(panel):
    item = panel.plot.getPlotItem()
    view = item.getViewBox()
    shown = QRectF(panel.plot.viewport().rect())  # the scene as the widget shows it
    legend = item.legend
    assert [label.text for _, label in legend.items] == ["fits", "too big", "fit", "predicted"]
    assert not scene_rect(legend).intersects(scene_rect(view))  # above the data, not over the "too big" cross
    assert shown.contains(scene_rect(legend))
    title = item.getAxis("left").label
    assert title.toPlainText().startswith("peak memory") and shown.contains(glyphs_rect(title))  # not "peak memor"


def test_the_limit_says_its_size_inside_the_plot(panel):
    label = panel.limit_line.label
    assert label.textItem.toPlainText() == "limit 1.30 GB"
    view = panel.plot.getPlotItem().getViewBox()
    assert scene_rect(view).contains(label.textItem.mapRectToScene(QRectF(label.textItem.boundingRect())))


def test_each_trial_shows_its_predicted_peak_beside_the_measured_one(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    import functools

    import gpu_train_monitor.finder.search
    from gpu_train_monitor.config.run_config import RunConfig
    from gpu_train_monitor.gui.qt.locale_format import integer
    from tests.support.predictions import ModelPredictions

    def trial(config, batch: int, steps: int) -> int:  # the real step takes 10% more per image than predicted
        return 3_000_000 + 110_000 * batch

    monkeypatch.setattr(
        gpu_train_monitor.finder.search,
        "find_batch_size",
        functools.partial(gpu_train_monitor.finder.search.find_batch_size, measure=trial, predict=ModelPredictions()),
    )
    panel = FinderPanel(lambda: RunConfig(device="cpu", model="tiny-cnn", synthetic_samples=20_000))
    qtbot.addWidget(panel)
    panel.capacity.setValue(1.0)  # GB: ~8,000 images, within the training set
    panel._on_find()
    qtbot.waitUntil(lambda: panel.result is not None, timeout=10_000)
    result = panel.result
    assert 2 <= len(result.trials) <= 3  # the first trial measured over the limit: the prediction corrected
    text = panel.result_label.text()
    assert f"Largest batch that fits: {integer(result.batch_size)}" in text
    assert f"The prediction said batch {integer(result.predicted_batch)}; {len(result.trials)} real trials" in text
    first = result.trials[-1]  # the largest batch: the prediction's, which did not fit
    tip = panel.result_label.toolTip().splitlines()
    assert len(tip) == len(result.trials)
    assert any(line.startswith(f"batch {integer(first.batch_size)}: peak") and "(predicted " in line for line in tip)
    xs, ys = panel.predicted_scatter.getData()
    assert sorted(xs) == [t.batch_size for t in result.trials]  # a hollow point per trial, at its predicted peak
    assert set(ys) == {t.predicted_bytes for t in result.trials}


def test_stop_ends_the_running_trial_at_once(qtbot, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """Stop was asked between trials only: a trial process at a large batch ran on for over 40 s after it."""
    import functools
    import time

    import gpu_train_monitor.finder.search
    from gpu_train_monitor.config.run_config import RunConfig
    from tests.core.finder.test_trial_process import STOP_WITHIN_S, gone, hanging_trial
    from tests.support.predictions import ModelPredictions

    pidfile = hanging_trial(monkeypatch, tmp_path)  # each trial process hangs, deaf to SIGTERM
    monkeypatch.setattr(
        gpu_train_monitor.finder.search,
        "find_batch_size",
        functools.partial(gpu_train_monitor.finder.search.find_batch_size, predict=ModelPredictions()),
    )
    panel = FinderPanel(lambda: RunConfig(device="cpu", model="tiny-cnn"))
    qtbot.addWidget(panel)
    panel.capacity.setValue(1.0)  # GB
    panel._on_find()
    qtbot.waitUntil(lambda: pidfile.exists() and pidfile.read_text() != "", timeout=30_000)
    started = time.monotonic()
    with qtbot.waitSignal(panel.task.ended, timeout=int(STOP_WITHIN_S * 1000)):
        panel.stop_button.click()
    assert time.monotonic() - started < STOP_WITHIN_S
    assert gone(int(pidfile.read_text()))
    assert panel.result_label.text() == "the batch-size search was stopped"
    assert panel.find_button.isEnabled() and not panel.stop_button.isEnabled()
