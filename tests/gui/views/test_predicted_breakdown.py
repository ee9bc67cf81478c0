"""The memory breakdown tab after a run: the step as predicted beside the step as measured, and the error."""

from __future__ import annotations

import re

from core.run.events import MemoryBreakdown
from gui.views.breakdown_view import BreakdownView
from gui.views.predicted_breakdown import STEP_PARTS, error_percent, step_bytes
from gui.views.window_state import WindowState
from tests.support.gui_support import FAST

RUN_TIMEOUT_MS = 60_000
SIZE = r"[\d.]+\s(B|kB|MB|GB)"  # \s: a space that does not break (U+00A0) too


def test_after_a_short_run_the_tab_shows_the_predicted_step_beside_the_measured_one(qtbot, window):
    window.tabs.setCurrentWidget(window.breakdown_view)
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS):
        window.start_run(FAST)
    view = window.breakdown_view
    predicted = view.predicted
    qtbot.waitUntil(lambda: predicted.prediction is not None and "against" in predicted.line.text(), timeout=30_000)
    assert window.state is WindowState.FINISHED
    assert predicted.prediction.batch_size == FAST.batch_size
    for key in STEP_PARTS:  # every part a step holds: measured, then predicted
        assert re.fullmatch(rf"{SIZE}\s\(\d+%\) · predicted {SIZE}", view.value_labels[key].text()), key
    shown = view.value_labels["params_bytes"].text()
    assert shown == "380.86\u00a0kB\u00a0(2%) · predicted 380.86\u00a0kB"  # the same weights; a size never breaks
    error = error_percent(predicted.prediction.total_bytes, step_bytes(view.last))
    match = re.fullmatch(
        rf"Predicted peak ({SIZE}) against ({SIZE}) measured at step (\d+): ([+−][\d.]+)% off", predicted.line.text()
    )
    assert match, predicted.line.text()
    assert int(match[5]) == view.last.step
    assert float(match[6].replace("−", "-")) == round(error, 1)
    assert abs(error) < 25  # tiny-cnn on the CPU: within a few %
    assert "tensors without memory" in predicted.line.toolTip()


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
