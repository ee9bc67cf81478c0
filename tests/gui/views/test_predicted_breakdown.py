"""The memory breakdown tab after a run: the step as predicted beside the step as measured, and the error."""

from __future__ import annotations

import re

from PySide6.QtWidgets import QVBoxLayout, QWidget

from gpu_train_monitor.base.text import Message
from gpu_train_monitor.events.events import MemoryBreakdown, StepPredicted
from gpu_train_monitor.gui.history.feed import StoreLink
from gpu_train_monitor.gui.plots.loss_plot import LossPlot
from gpu_train_monitor.gui.plots.memory_plot import MemoryPlot
from gpu_train_monitor.gui.run.launched_feed import LaunchedFeed
from gpu_train_monitor.gui.views.breakdown_view import BreakdownView
from gpu_train_monitor.gui.views.event_display import EventDisplay
from gpu_train_monitor.gui.views.log_panel import LogPanel
from gpu_train_monitor.gui.views.predicted_breakdown import step_bytes
from gpu_train_monitor.gui.views.run_view import RunView
from gpu_train_monitor.gui.views.window_state import WindowState
from gpu_train_monitor.memory.like_measured import STEP_PARTS, as_measured, error_percent
from gpu_train_monitor.store.run_store import RunStore
from gpu_train_monitor.watch.session import Watch
from tests.support.gui_support import FAST
from tests.support.watched_loops import tiny_model, train

RUN_TIMEOUT_MS = 60_000
SIZE = r"[\d.]+\s(B|kB|MB|GB)"  # \s: a space that does not break (U+00A0) too


def test_after_a_short_run_the_tab_shows_the_predicted_step_beside_the_measured_one(qtbot, window):
    window.parts.tabs.setCurrentWidget(window.parts.view.breakdown_view)
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS):
        window.start_run(FAST)
    view = window.parts.view.breakdown_view
    predicted = view.predicted
    qtbot.waitUntil(lambda: predicted.prediction is not None and "against" in predicted.line.text(), timeout=30_000)
    assert window.state is WindowState.FINISHED
    assert predicted.prediction.batch_size == FAST.batch_size
    for key in STEP_PARTS:  # every part a step holds: measured, then predicted
        assert re.fullmatch(rf"{SIZE}\s\(\d+%\) · predicted {SIZE}", view.value_labels[key].text()), key
    shown = view.value_labels["params_bytes"].text()
    assert shown == "380.86\u00a0kB\u00a0(2%) · predicted 380.86\u00a0kB"  # the same weights; a size never breaks
    # like with like: every gradient once the step is done, as measured (at the predicted peak: 5 kB of 379 kB)
    assert view.value_labels["grads_bytes"].text() == "379.05\u00a0kB\u00a0(2%) · predicted 379.05\u00a0kB"
    error = error_percent(as_measured(predicted.prediction, view.last).total_bytes, step_bytes(view.last))
    match = re.fullmatch(
        rf"Predicted step ({SIZE}) against ({SIZE}) measured at step (\d+): ([+−][\d.]+)% off", predicted.line.text()
    )
    assert match, predicted.line.text()  # the CPU keeps no peak: the parts summed, on both sides
    assert int(match[5]) == view.last.step
    assert float(match[6].replace("−", "-")) == round(error, 1)
    assert abs(error) < 1  # tiny-cnn on the CPU: the same bytes counted the same way
    tip = predicted.line.toolTip()
    assert "tensors without memory" in tip and "gradients once the step is done" in tip
    assert "predicted peak of live tensors" in tip
    timeline = view.timeline  # the same prediction over the step's time, said predicted: the CPU records none
    assert not timeline.isHidden() and timeline.predicted is not None and timeline.measured is None
    assert timeline.plot.timeline is predicted.prediction.timeline
    assert timeline.plot.timeline.peak.total_bytes == predicted.prediction.peak_bytes
    assert "CUDA only" in timeline.note.text() and f"batch {FAST.batch_size}" in timeline.caption.text()


def test_a_breakdown_with_no_run_to_predict_shows_no_prediction(qtbot):
    """A recorded run's window, a watched script: nothing was asked to be predicted."""
    view = BreakdownView()
    qtbot.addWidget(view)
    b = MemoryBreakdown(3, 4_000_000, 4_000_000, 4_000_000, 1_000_000, 7_000_000, 0, (), "allocator")
    view.show_breakdown(b)
    assert view.predicted.isHidden() and not view.predicted.task.busy
    assert view.value_labels["params_bytes"].text() == "4.00 MB (20%)"


def test_the_error_leaves_the_dataset_on_the_device_out():
    b = MemoryBreakdown(3, 4_000_000, 4_000_000, 4_000_000, 1_000_000, 7_000_000, 50_000_000, (), "allocator")
    assert step_bytes(b) == 20_000_000
    assert error_percent(21_000_000, step_bytes(b)) == 5.0


def watched_prediction(**changes: object) -> StepPredicted:
    values = dict(
        step=1,
        peak_bytes=22_000_000,
        params_bytes=4_000_000,
        grads_bytes=3_000_000,
        optimizer_bytes=4_000_000,
        batch_bytes=1_000_000,
        activations_bytes=10_000_000,
        phase_peaks=(("forward", 15_000_000), ("backward", 22_000_000), ("optimizer", 19_000_000)),
        batch_size=32,
        device_kind="cpu",
        traced_on="cpu",
        what="Net at batch 32 (no autocast, SGD) on cpu",
        elapsed_s=0.2,
    )
    values.update(changes)
    return StepPredicted(**values)


def test_a_watched_run_shows_its_recorded_prediction_beside_each_measured_breakdown(qtbot):
    shown = EventDisplay(LossPlot(), MemoryPlot(), BreakdownView(), LogPanel())
    for widget in (shown.loss_plot, shown.memory_plot, shown.breakdown_view, shown.log):
        qtbot.addWidget(widget)
    view = shown.breakdown_view
    assert shown.show_event(watched_prediction())  # live or read back from the store: the same display
    assert view.predicted.isHidden()  # nothing to compare with before a breakdown is measured
    b = MemoryBreakdown(3, 4_000_000, 4_000_000, 4_000_000, 0, 8_000_000, 0, (), "saved-tensors")
    shown.show_event(b)
    assert not view.predicted.task.busy  # the window predicts nothing itself
    assert view.value_labels["params_bytes"].text() == "4.00\u00a0MB\u00a0(20%) · predicted 4.00\u00a0MB"
    assert view.value_labels["activations_bytes"].text().endswith("· predicted 10.00\u00a0MB")
    # recorded before the step's end was counted: told at its peak, as it was
    assert view.predicted.line.text() == "Predicted peak 22.00 MB against 20.00 MB measured at step 3: +10.0% off"
    later = MemoryBreakdown(9, 4_000_000, 4_000_000, 4_000_000, 0, 10_000_000, 0, (), "saved-tensors")
    shown.show_event(later)
    assert view.predicted.line.text() == "Predicted peak 22.00 MB against 22.00 MB measured at step 9: +0.0% off"


def test_a_watched_prediction_is_told_as_its_breakdown_was_measured(qtbot):
    view = BreakdownView()
    qtbot.addWidget(view)
    view.predicted.recorded(
        watched_prediction(grads_end_bytes=4_000_000, saved_activations_bytes=7_000_000, saved_inputs_bytes=1_000_000)
    )
    view.show_breakdown(MemoryBreakdown(3, 4_000_000, 4_000_000, 4_000_000, 0, 8_000_000, 0, (), "saved-tensors"))
    assert view.value_labels["grads_bytes"].text().endswith("· predicted 4.00\u00a0MB")  # every gradient, as measured
    # no batch of its own: what the model received is within the activations, on both sides
    assert view.value_labels["batch_bytes"].text().endswith("· predicted 0\u00a0B")
    assert view.value_labels["activations_bytes"].text().endswith("· predicted 8.00\u00a0MB")
    assert view.predicted.line.text() == "Predicted step 20.00 MB against 20.00 MB measured at step 3: +0.0% off"


def test_a_watched_step_that_could_not_be_traced_says_why_beside_the_measured_one(qtbot):
    view = BreakdownView()
    qtbot.addWidget(view)
    reason = Message(
        "the memory of {what} cannot be predicted without running it: {reason}; real trial steps measure it instead",
        what="Net",
        reason=Message("an operation's result depends on the values in the batch ({op})", op="aten.nonzero"),
    )
    view.predicted.recorded(watched_prediction(peak_bytes=0, reason=reason))
    view.show_breakdown(MemoryBreakdown(3, 4_000_000, 4_000_000, 4_000_000, 0, 8_000_000, 0, (), "saved-tensors"))
    assert view.predicted.prediction is None
    assert view.predicted.line.text() == (
        "No prediction of this step to compare with: an operation's result depends on the values in the batch "
        "(aten.nonzero)"
    )
    assert view.value_labels["params_bytes"].text() == "4.00 MB (20%)"  # measured only


def test_a_watched_run_followed_live_shows_its_prediction_beside_its_breakdown(qtbot, tmp_path):
    """The main window follows a watched script through the store (gpu_train_monitor.gui.run.launched_feed), as it
    trains."""
    db = tmp_path / "runs.sqlite3"
    model, optimizer = tiny_model()
    with Watch(model, optimizer, runs_db=db, signals=False, report_interval_s=0.0) as watched:
        train(model, optimizer, 20, watched.step)
    link = StoreLink(db)
    view = RunView()
    view.redraw.stop()
    host = QWidget()  # the view's widgets placed as the window places them, removed with it
    qtbot.addWidget(host)
    layout = QVBoxLayout(host)
    for widget in (view.loss_plot, view.memory_plot, view.stats, view.breakdown_view, view.log, view.step_time):
        layout.addWidget(widget)
    feed = LaunchedFeed(view, link)
    try:
        with RunStore(db, readonly=True) as store:
            feed.follow(store.find_uid(watched.run_uid))
        feed.finish()
        breakdown = view.breakdown_view
        assert breakdown.last is not None and breakdown.predicted.prediction is not None
        assert " · predicted " in breakdown.value_labels["params_bytes"].text()
        assert "% off" in breakdown.predicted.line.text()
    finally:
        link.close()
