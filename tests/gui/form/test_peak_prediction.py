"""The form's predicted peak beside the batch size: worked out off the GUI thread after a change, the verdict
against the device's capacity, and an answer to settings changed meanwhile never shown."""

from __future__ import annotations

import re
import threading
import time

import pytest
from PySide6.QtWidgets import QLabel

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.finder import budget
from gpu_train_monitor.gui.form.peak_prediction import (
    PeakPrediction,
    PredictionOutcome,
    predict_outcome,
    process_bytes,
    verdict,
)
from tests.support.gui_support import FAST
from tests.support.predictions import ModelPredictions

PREDICTION_WAIT_MS = 60_000  # the process's first prediction warms torch's fake tensors up (seconds on 2 cores)


def shown(label) -> str:
    """The label's text as read: rich text's tags gone, a size's unbreakable space a space."""
    return re.sub(r"<[^>]+>", "", label.text()).replace("\xa0", " ")


def test_the_verdict_keeps_a_tenth_of_the_capacity_free():
    assert verdict(80, 100) == "fits"
    assert verdict(95, 100) == "tight"
    assert verdict(101, 100) == "does not fit"


MACHINE_TOTAL = 25_276_203_008  # a 24 GiB machine's memory, as the device list says it


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("cpu", "predicted peak 1.50 GB of 3.00 GB: fits (1.50 GB to spare)"),  # it said 24.28 GB to spare
        ("cuda", "predicted peak 1.00 GB of 25.28 GB: fits (24.28 GB to spare)"),  # a GPU's memory is all its own
    ],
)
def test_on_the_cpu_the_verdict_counts_the_process_s_own_memory_against_what_is_available(
    qtbot, monkeypatch: pytest.MonkeyPatch, kind: str, expected: str
) -> None:
    """The figures the batch-size finder plans with (gpu_train_monitor.finder.budget), not the machine's total."""
    monkeypatch.setattr(budget, "cpu_trial_bytes", lambda: 3 * 10**9)  # what other programs and the app leave
    monkeypatch.setattr(budget, "_measured_own_bytes", 500 * 10**6)  # as the finder's trial process measured it
    label = QLabel()
    qtbot.addWidget(label)
    peak = PeakPrediction(object(), label, lambda: MACHINE_TOTAL)
    # 3 x 100 MB for the parameters, their gradients and SGD's momentum, 700 images of 1 MB
    peak.prediction = ModelPredictions(params=100 * 10**6, per_sample=10**6)(RunConfig(), 700)
    assert peak.prediction.total_bytes == 10**9
    peak._ready, peak._kind = True, kind
    peak.show_again(current=True)
    assert shown(label) == expected
    if kind == "cpu":
        assert "500.00 MB" in label.toolTip()  # the process's own memory, counted


def test_a_new_batch_size_is_predicted_after_typing_without_blocking_it(make_window, qtbot, monkeypatch):
    monkeypatch.setattr(budget, "cpu_trial_bytes", lambda: 20 * 10**9)  # what is available, kept still
    window = make_window(FAST)
    label = window.parts.form.peak_label
    qtbot.waitUntil(lambda: window.parts.peak.prediction is not None, timeout=PREDICTION_WAIT_MS)
    assert window.parts.peak.prediction.batch_size == 32
    assert re.fullmatch(r"predicted peak [\d.]+ (MB|GB) of 20.00 GB: fits \([\d.]+ GB to spare\)", shown(label))
    started = time.perf_counter()
    window.parts.form.set_batch_size(64)  # each change the user types
    window.parts.form.set_batch_size(128)
    assert time.perf_counter() - started < 0.2  # nothing is worked out in the GUI thread
    assert not label.isEnabled()  # the 32's answer, greyed out while the new one is worked out
    qtbot.waitUntil(lambda: window.parts.peak.prediction.batch_size == 128 and label.isEnabled(), timeout=10_000)
    assert "of 20.00 GB: fits" in shown(label)  # the CPU's: what is available, never the machine's total


def test_an_absurd_batch_on_a_small_capacity_does_not_fit(make_window, qtbot):
    window = make_window(FAST.replace(synthetic_samples=4096))
    window.parts.peak.capacity = lambda: 50_000_000  # 50 MB
    window.parts.form.set_batch_size(2048)
    qtbot.waitUntil(lambda: "does not fit" in window.parts.form.peak_label.text(), timeout=PREDICTION_WAIT_MS)
    assert window.parts.peak.prediction.batch_size == 2048
    over = (process_bytes(window.parts.peak.prediction, "cpu") - 50_000_000) / 1e9  # its own memory counted
    assert re.fullmatch(
        rf"predicted peak [\d.]+ GB of 50.00 MB: does not fit \({over:.2f} GB over\)",
        shown(window.parts.form.peak_label),
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
    window.parts.peak.predictor = predictor
    window.parts.peak.task.answered.connect(lambda outcome: answered.append(outcome.prediction.batch_size))
    window.parts.form.set_config(FAST)
    qtbot.waitUntil(lambda: asked == [32], timeout=5_000)
    window.parts.form.set_batch_size(16)
    qtbot.wait(400)  # past the quiet interval: the 16 waits for the 32 to end
    release.set()
    qtbot.waitUntil(lambda: window.parts.peak.prediction is not None, timeout=PREDICTION_WAIT_MS)
    assert asked == [32, 16] and answered == [16]
    assert window.parts.peak.prediction.batch_size == 16
    assert shown(window.parts.form.peak_label).startswith("predicted peak ")


def test_the_line_waits_for_torch(qtbot, settings):
    from gpu_train_monitor.gui.window.main_window import MainWindow

    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    assert window.parts.form.peak_label.text() == "predicted peak: waiting for PyTorch to load…"
    window.on_torch_ready()
    qtbot.waitUntil(lambda: window.parts.peak.prediction is not None, timeout=PREDICTION_WAIT_MS)
    assert isinstance(window.parts.peak, PeakPrediction)
