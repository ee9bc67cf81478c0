"""How long a run will take, from what a finished run with the same speed-deciding settings measured.

After each completed run the window remembers its images/s and the start-up time around it, keyed by
what decides speed (the device, the model as resolved, batch size, amp, channels_last, compile, placement,
dataset). Before Start, a form whose settings match a measurement says "about 1 min 20 s (from 3,200
images/s measured on cpu, plus 2 s start-up)"; with no match it says so rather than guess from another
configuration (a batch size or a model changes images/s by factors). No widgets here: the store takes
anything with QSettings' `value`/`setValue`, so the arithmetic is tested as plain functions; the texts go
through Qt's translator and the locale's number format.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.config.sequences import is_text_dataset
from gpu_train_monitor.gui.qt.locale_format import integer

SPEED_FIELDS = ("batch_size", "amp", "channels_last", "compile", "placement", "dataset")
TEXT_SPEED_FIELDS = ("seq_len", "layers", "width", "heads", "attention")
STORE_KEY = "speed_measurements"
MAX_KEPT = 64  # measurements remembered (the most recent): enough for every configuration a user returns to
NO_ESTIMATE = QT_TRANSLATE_NOOP("run_estimate", "no measurement yet for these settings: a finished run gives one")


@dataclass(frozen=True)
class Measurement:
    """What one completed run measured: its steady speed and the time that speed does not explain."""

    samples_per_s: float  # the run's median images/s after warm-up (RunSummary.samples_per_s)
    startup_s: float  # building, data loading, warm-up and compile, validation: wall time beyond images / speed
    device: str  # where it was measured, as the estimate names it: "cpu", "cuda:0 (NVIDIA H200)"


def speed_key(config: RunConfig, device: str, model: str) -> str:
    """The settings that decide images/s, as one string. `device`: the device's identity (kind and name,
    so another GPU in the same slot is another key); `model`: the model as resolved (auto -> tiny-cnn)."""
    values: dict[str, Any] = {field: getattr(config, field) for field in SPEED_FIELDS}
    if is_text_dataset(config.dataset):  # a text run's speed depends on its sequences and the GPT's size too
        values.update({field: getattr(config, field) for field in TEXT_SPEED_FIELDS})
    values.update(device=device, model=model)
    return json.dumps(values, sort_keys=True)


def measurement_from(summary: Any, device: str) -> Measurement | None:
    """The measurement a run's `RunSummary` holds, or None when it measured no steady speed of the
    settings asked for (not completed, nothing after warm-up, or the batch shrank after out of memory)."""
    rate = summary.samples_per_s
    if summary.status != "completed" or not rate or rate <= 0 or summary.steps <= summary.warmup_steps:
        return None
    if summary.batch_size_changes:
        return None
    return Measurement(float(rate), max(float(summary.wall_s) - summary.samples / rate, 0.0), device)


def planned_steps(config: RunConfig, train_images: int | None) -> int | None:
    """Steps `config` will train (as the session plans them: whole batches, max_steps or the epochs,
    whichever ends first); None when that depends on a training-set size not known yet."""
    limit = config.epoch_limit
    if limit is None:  # max_steps alone bounds the run
        return config.max_steps
    if train_images is None:
        return None
    total = (train_images // config.batch_size) * limit
    return total if config.max_steps is None else min(total, config.max_steps)


def planned_images(config: RunConfig, train_images: int | None) -> int | None:
    steps = planned_steps(config, train_images)
    return None if steps is None else steps * config.batch_size


def estimate_s(measurement: Measurement, images: int) -> float:
    """Seconds for `images` training images at the measured speed, plus the measured start-up."""
    return measurement.startup_s + images / measurement.samples_per_s


def duration(seconds: float) -> str:
    """'45 s', '1 min 20 s', '2 h 5 min': a duration as a person reads it (at least a second)."""
    whole = max(int(round(seconds)), 1)
    if whole < 60:
        return QCoreApplication.translate("run_estimate", "{seconds} s").format(seconds=whole)
    if whole < 3600:
        minutes, secs = divmod(whole, 60)
        if secs:
            return QCoreApplication.translate("run_estimate", "{minutes} min {seconds} s").format(
                minutes=minutes, seconds=secs
            )
        return QCoreApplication.translate("run_estimate", "{minutes} min").format(minutes=minutes)
    hours, rest = divmod(whole, 3600)
    minutes = int(round(rest / 60))
    if minutes == 60:
        hours, minutes = hours + 1, 0
    if minutes:
        return QCoreApplication.translate("run_estimate", "{hours} h {minutes} min").format(
            hours=integer(hours), minutes=minutes
        )
    return QCoreApplication.translate("run_estimate", "{hours} h").format(hours=integer(hours))


def duration_text(seconds: float) -> str:
    """'about 45 s', 'about 1 min 20 s', 'about 2 h 5 min': a person's reading of an estimate."""
    return QCoreApplication.translate("run_estimate", "about {duration}").format(duration=duration(seconds))


def estimate_text(seconds: float, measurement: Measurement, tokens_per_sample: int = 0) -> str:
    """The estimate and what it is from; `tokens_per_sample`: a text run's seq_len, whose speed is tokens/s."""
    if tokens_per_sample:
        return _tokens_estimate_text(seconds, measurement, tokens_per_sample)
    rate = integer(round(measurement.samples_per_s))
    if measurement.startup_s >= 0.5:
        return QCoreApplication.translate(
            "run_estimate", "{duration} (from {rate} images/s measured on {device}, plus {startup} start-up)"
        ).format(
            duration=duration_text(seconds),
            rate=rate,
            device=measurement.device,
            startup=duration(measurement.startup_s),
        )
    return QCoreApplication.translate("run_estimate", "{duration} (from {rate} images/s measured on {device})").format(
        duration=duration_text(seconds), rate=rate, device=measurement.device
    )


def _tokens_estimate_text(seconds: float, measurement: Measurement, tokens_per_sample: int) -> str:
    rate = integer(round(measurement.samples_per_s * tokens_per_sample))
    if measurement.startup_s >= 0.5:
        return QCoreApplication.translate(
            "run_estimate", "{duration} (from {rate} tokens/s measured on {device}, plus {startup} start-up)"
        ).format(
            duration=duration_text(seconds),
            rate=rate,
            device=measurement.device,
            startup=duration(measurement.startup_s),
        )
    return QCoreApplication.translate("run_estimate", "{duration} (from {rate} tokens/s measured on {device})").format(
        duration=duration_text(seconds), rate=rate, device=measurement.device
    )


class MeasurementStore:
    """The measurements, as one JSON value in the settings (most recent last, at most MAX_KEPT)."""

    def __init__(self, settings: Any) -> None:
        self._settings = settings
        self._cache: dict[str, dict[str, Any]] | None = None

    def _all(self) -> dict[str, dict[str, Any]]:
        if self._cache is None:
            try:
                loaded = json.loads(str(self._settings.value(STORE_KEY) or "{}"))
                self._cache = loaded if isinstance(loaded, dict) else {}
            except ValueError:  # edited by hand or written by something else: start afresh
                self._cache = {}
        return self._cache

    def get(self, key: str) -> Measurement | None:
        found = self._all().get(key)
        try:
            return Measurement(float(found["samples_per_s"]), float(found["startup_s"]), str(found["device"]))
        except (TypeError, KeyError, ValueError):
            return None

    def put(self, keys: list[str], measurement: Measurement) -> None:
        stored = self._all()
        for key in keys:
            stored.pop(key, None)  # re-inserted last: the most recent
            stored[key] = asdict(measurement)
        while len(stored) > MAX_KEPT:
            stored.pop(next(iter(stored)))
        self._settings.setValue(STORE_KEY, json.dumps(stored))


# (identity, label) of a device spec ("cpu", "cuda:0", "mps:0"), or None when it is not on this machine
DeviceLookup = Callable[[str], "tuple[str, str] | None"]


class RunEstimates:
    """Records what finished runs measured and estimates the form's next run from it."""

    def __init__(self, settings: Any, device_lookup: DeviceLookup) -> None:
        self.store = MeasurementStore(settings)
        self._device = device_lookup

    def record(self, requested: RunConfig, finished: Any) -> Measurement | None:
        """Remember the speed of a finished run started with `requested` (RunFinished `finished`). It is kept
        under the placement asked for and the one `auto` resolved to, so either setting finds it."""
        summary = finished.summary
        device = self._device(str(summary.device))
        if device is None:
            return None
        measurement = measurement_from(summary, device[1])
        if measurement is None:
            return None
        model = str(summary.config.get("model", requested.model))
        placements = dict.fromkeys((requested.placement, str(summary.config.get("placement", requested.placement))))
        keys = [speed_key(requested.replace(placement=p), device[0], model) for p in placements]
        self.store.put(keys, measurement)
        return measurement

    def lookup(self, config: RunConfig, device_spec: str, device_kind: str) -> Measurement | None:
        device = self._device(device_spec)
        if device is None:
            return None
        # imports torch: the devices are known (listed by torch)
        from gpu_train_monitor.model.models import resolve_model

        return self.store.get(speed_key(config, device[0], resolve_model(config.model, device_kind, config.dataset)))

    def text_for(self, config: RunConfig, device_spec: str, device_kind: str, train_images: int | None) -> str:
        """What the window says before Start: the estimate, or why there is none."""
        measurement = self.lookup(config, device_spec, device_kind)
        if measurement is None:
            return QCoreApplication.translate("run_estimate", NO_ESTIMATE)
        images = planned_images(config, train_images)
        if images is None:
            return QCoreApplication.translate(
                "run_estimate",
                "no estimate: the training set's size is not known yet (set Max steps, or count the folder)",
            )
        tokens = config.seq_len if is_text_dataset(config.dataset) else 0
        return estimate_text(estimate_s(measurement, images), measurement, tokens)

    def text_for_form(self, form: Any) -> str:
        """`text_for` the settings form's values ("" while they cannot run: the form says why)."""
        if not form.valid:
            return ""
        config = RunConfig(**form.values())
        return self.text_for(config, form.resolved_spec(), form.device_kind(), form.train_images(config))
