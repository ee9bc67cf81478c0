"""The form's predicted peak beside the batch size: worked out off the GUI thread after a change, the verdict
against the device's capacity, and an answer to settings changed meanwhile never shown."""

from __future__ import annotations

import re
import threading
import time

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.gui.form.peak_prediction import PeakPrediction, PredictionOutcome, predict_outcome, verdict
from tests.support.gui_support import FAST

PREDICTION_WAIT_MS = 60_000  # the process's first prediction warms torch's fake tensors up (seconds on 2 cores)


def shown(label) -> str:
    """The label's text as read: rich text's tags gone, a size's unbreakable space a space."""
    return re.sub(r"<[^>]+>", "", label.text()).replace("\xa0", " ")


def test_the_verdict_keeps_a_tenth_of_the_capacity_free():
    assert verdict(80, 100) == "fits"
    assert verdict(95, 100) == "tight"
    assert verdict(101, 100) == "does not fit"


def test_a_new_batch_size_is_predicted_after_typing_without_blocking_it(make_window, qtbot):
    window = make_window(FAST)
    label = window.form.peak_label
    qtbot.waitUntil(lambda: window.peak.prediction is not None, timeout=PREDICTION_WAIT_MS)
    assert window.peak.prediction.batch_size == 32
    assert re.fullmatch(r"predicted peak [\d.]+ MB of [\d.]+ GB: fits \([\d.]+ GB to spare\)", shown(label))
    started = time.perf_counter()
    window.form.set_batch_size(64)  # each change the user types
    window.form.set_batch_size(128)
    assert time.perf_counter() - started < 0.2  # nothing is worked out in the GUI thread
    assert not label.isEnabled()  # the 32's answer, greyed out while the new one is worked out
    qtbot.waitUntil(lambda: window.peak.prediction.batch_size == 128 and label.isEnabled(), timeout=10_000)
    assert f"of {window.probe.sample().capacity_bytes / 1e9:.2f} GB: fits" in shown(label)


def test_an_absurd_batch_on_a_small_capacity_does_not_fit(make_window, qtbot):
    window = make_window(FAST.replace(synthetic_samples=4096))
    window.peak.capacity = lambda: 50_000_000  # 50 MB
    window.form.set_batch_size(2048)
    qtbot.waitUntil(lambda: "does not fit" in window.form.peak_label.text(), timeout=PREDICTION_WAIT_MS)
    assert window.peak.prediction.batch_size == 2048
    over = (window.peak.prediction.total_bytes - 50_000_000) / 1e9
    assert re.fullmatch(
        rf"predicted peak [\d.]+ GB of 50.00 MB: does not fit \({over:.2f} GB over\)", shown(window.form.peak_label)
    )


def test_an_answer_to_settings_changed_meanwhile_is_dropped(make_window, qtbot):
    window = make_window(None)  # the form's defaults: nothing asked of the real predictor below
    release, asked = threading.Event(), []

    def predictor(config: RunConfig, kind: str) -> PredictionOutcome:
        asked.append(config.batch_size)
        if config.batch_size == 32:
            release.wait(10)  # the old question is still being worked out when the new one is asked
        return predict_outcome(config, kind)

    answered: list[int] = []
    window.peak.predictor = predictor
    window.peak.task.answered.connect(lambda outcome: answered.append(outcome.prediction.batch_size))
    window.form.set_config(FAST)
    qtbot.waitUntil(lambda: asked == [32], timeout=5_000)
    window.form.set_batch_size(16)
    qtbot.wait(400)  # past the quiet interval: the 16 waits for the 32 to end
    release.set()
    qtbot.waitUntil(lambda: window.peak.prediction is not None, timeout=PREDICTION_WAIT_MS)
    assert asked == [32, 16] and answered == [16]
    assert window.peak.prediction.batch_size == 16
    assert shown(window.form.peak_label).startswith("predicted peak ")


def test_the_line_waits_for_torch(qtbot, settings):
    from gpu_train_monitor.gui.window.main_window import MainWindow

    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    assert window.form.peak_label.text() == "predicted peak: waiting for PyTorch to load…"
    window.on_torch_ready()
    qtbot.waitUntil(lambda: window.peak.prediction is not None, timeout=PREDICTION_WAIT_MS)
    assert isinstance(window.peak, PeakPrediction)
