"""The run-time estimate's arithmetic and its store: plain functions, no window."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from PySide6.QtCore import QLocale

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.gui.form.estimate import (
    MAX_KEPT,
    NO_ESTIMATE,
    STORE_KEY,
    Measurement,
    MeasurementStore,
    RunEstimates,
    duration_text,
    estimate_s,
    estimate_text,
    measurement_from,
    planned_images,
    planned_steps,
    speed_key,
)


class FakeSettings:
    """QSettings' value/setValue, in a dict."""

    def __init__(self, values: dict | None = None) -> None:
        self.values = dict(values or {})

    def value(self, key: str):
        return self.values.get(key)

    def setValue(self, key: str, value) -> None:  # noqa: N802 - QSettings' name
        self.values[key] = value


@pytest.fixture
def english_numbers():
    """The locale the window takes for English (gpu_train_monitor.gui.i18n.language): digits grouped, 3,200."""
    before = QLocale()
    QLocale.setDefault(QLocale(QLocale.Language.English, QLocale.Country.UnitedStates))
    yield
    QLocale.setDefault(before)


def summary(**changes):
    values = dict(
        status="completed",
        steps=12,
        samples=384,
        wall_s=4.0,
        samples_per_s=128.0,
        warmup_steps=3,
        batch_size_changes=(),
        device="cpu",
        config={"model": "tiny-cnn", "placement": "resident"},
    )
    values.update(changes)
    return SimpleNamespace(**values)


@pytest.mark.parametrize(
    ("config", "train", "steps"),
    [
        (RunConfig(max_steps=12), None, 12),  # max_steps alone: the training set's size does not matter
        (RunConfig(batch_size=100), 2560, 25),  # one epoch by default: whole batches only
        (RunConfig(batch_size=100, epochs=3), 2560, 75),
        (RunConfig(batch_size=100, epochs=3, max_steps=30), 2560, 30),  # whichever ends first
        (RunConfig(batch_size=100, epochs=3, max_steps=300), 2560, 75),
        (RunConfig(dataset="imagefolder"), None, None),  # an image folder not counted yet
    ],
)
def test_planned_steps_follow_the_sessions_plan(config, train, steps):
    assert planned_steps(config, train) == steps
    assert planned_images(config, train) == (None if steps is None else steps * config.batch_size)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.2, "about 1 s"),
        (44.6, "about 45 s"),
        (60, "about 1 min"),
        (80.4, "about 1 min 20 s"),
        (3599.6, "about 1 h"),
        (7500, "about 2 h 5 min"),
        (3600 * 3 - 10, "about 3 h"),
    ],
)
def test_durations_read_as_a_person_says_them(seconds, text):
    assert duration_text(seconds) == text


def test_a_measurement_is_the_runs_steady_speed_and_the_time_it_does_not_explain(english_numbers):
    measured = measurement_from(summary(), "cpu")
    assert measured == Measurement(128.0, 4.0 - 384 / 128.0, "cpu")
    # the same settings again: the estimate is the measured run's own wall time
    assert estimate_s(measured, 384) == pytest.approx(4.0)
    assert estimate_s(measured, 128 * 60) == pytest.approx(1.0 + 60)
    assert estimate_text(61.0, measured) == "about 1 min 1 s (from 128 images/s measured on cpu, plus 1 s start-up)"
    assert (
        estimate_text(61.0, Measurement(3200.0, 0.1, "cuda:0 (H200)"))
        == "about 1 min 1 s (from 3,200 images/s measured on cuda:0 (H200))"
    )


@pytest.mark.parametrize(
    "changes",
    [
        {"status": "stopped"},
        {"status": "failed"},
        {"samples_per_s": None},
        {"steps": 3},  # nothing after the warm-up report: no steady speed
        {"batch_size_changes": ({"step": 4, "from": 64, "to": 32},)},  # measured another batch size
    ],
)
def test_runs_that_measured_no_steady_speed_of_their_settings_give_no_measurement(changes):
    assert measurement_from(summary(**changes), "cpu") is None


def test_the_key_holds_what_decides_speed_and_nothing_else():
    base = RunConfig(batch_size=64)
    key = speed_key(base, "cpu", "tiny-cnn")
    assert speed_key(base.replace(lr=0.5, seed=3, max_steps=99), "cpu", "tiny-cnn") == key
    for changed in (
        base.replace(batch_size=32),
        base.replace(amp="bf16"),
        base.replace(channels_last=True),
        base.replace(compile=True),
        base.replace(placement="stream"),
        base.replace(dataset="mnist"),
    ):
        assert speed_key(changed, "cpu", "tiny-cnn") != key
    assert speed_key(base, "cuda|H200", "tiny-cnn") != key
    assert speed_key(base, "cpu", "resnet18") != key


def test_the_store_keeps_the_most_recent_and_survives_a_damaged_value():
    settings = FakeSettings()
    store = MeasurementStore(settings)
    for i in range(MAX_KEPT + 5):
        store.put([f"k{i}"], Measurement(float(i + 1), 0.0, "cpu"))
    kept = json.loads(settings.values[STORE_KEY])
    assert len(kept) == MAX_KEPT and "k0" not in kept and f"k{MAX_KEPT + 4}" in kept
    store.put(["k10"], Measurement(99.0, 0.0, "cpu"))  # measured again: the newest, not dropped next
    assert list(json.loads(settings.values[STORE_KEY]))[-1] == "k10"
    assert MeasurementStore(settings).get("k10") == Measurement(99.0, 0.0, "cpu")  # read back from the settings
    assert MeasurementStore(FakeSettings({STORE_KEY: "{not json"})).get("k1") is None
    assert MeasurementStore(FakeSettings({STORE_KEY: json.dumps({"k1": {"samples_per_s": "x"}})})).get("k1") is None


def test_estimates_record_under_the_placement_asked_for_and_the_one_auto_chose():
    estimates = RunEstimates(FakeSettings(), lambda spec: ("cpu", "cpu") if spec == "cpu" else None)
    asked = RunConfig(device="cpu", model="auto", batch_size=32, max_steps=12, placement="auto")
    measured = estimates.record(asked, SimpleNamespace(summary=summary()))
    assert measured is not None
    for placement in ("auto", "resident"):
        assert estimates.lookup(asked.replace(placement=placement), "cpu", "cpu") == measured
    assert estimates.lookup(asked.replace(placement="stream"), "cpu", "cpu") is None
    assert estimates.text_for(asked.replace(batch_size=64), "cpu", "cpu", 2560) == NO_ESTIMATE
    assert estimates.text_for(asked.replace(max_steps=120), "cpu", "cpu", 2560) == estimate_text(
        estimate_s(measured, 120 * 32), measured
    )
    # a device that is not on this machine is neither recorded nor looked up
    assert estimates.record(asked, SimpleNamespace(summary=summary(device="cuda:0"))) is None
    assert estimates.text_for(asked, "cuda:0", "cuda", 2560) == NO_ESTIMATE
