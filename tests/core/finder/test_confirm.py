"""The finder starting from the prediction: at most 3 real trials, one when the prediction holds, the answer
always a batch a trial measured under the limit, and the search before predictions where a step cannot be
predicted. Real trials are stood in for by a memory model (peak = fixed + per_sample * batch, out of memory
above the capacity), the prediction by tests.support.predictions; real ones: tests/e2e/test_finder_trials.py.
"""

from __future__ import annotations

import pytest

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.finder.search import find_batch_size
from tests.support.predictions import ModelPredictions

CONFIG = RunConfig(device="cpu", model="tiny-cnn", batch_size=64, synthetic_samples=20_000)  # above every answer
CAPACITY = 10**9
LIMIT = 9 * 10**8  # the default 10% margin
# the prediction model's step: 3 MB of weights, gradients and momentum, 100 kB per image
PARAMS, PER_SAMPLE = 1_000_000, 100_000


class Device:
    """Real trials: `scale` times the predicted per-image bytes, plus `overhead` the prediction leaves out."""

    def __init__(self, scale: float = 1.0, overhead: int = 0) -> None:
        self.scale, self.overhead = scale, overhead
        self.tried: list[int] = []

    def __call__(self, config: RunConfig, batch: int, steps: int) -> int | None:
        self.tried.append(batch)
        peak = self.overhead + 3 * PARAMS + int(self.scale * PER_SAMPLE * batch)
        return None if peak > CAPACITY else peak


def find(device: Device, model: ModelPredictions | None = None, **options: object):
    model = model or ModelPredictions(PARAMS, PER_SAMPLE)
    return find_batch_size(CONFIG, capacity=CAPACITY, measure=device, predict=model, **options)  # type: ignore[arg-type]


def largest_fitting(device: Device) -> int:
    return int((LIMIT - device.overhead - 3 * PARAMS) // (device.scale * PER_SAMPLE))


def test_a_prediction_that_holds_is_confirmed_by_one_trial() -> None:
    device = Device()
    seen = []
    result = find(device, on_trial=seen.append)
    assert len(device.tried) == 1 and len(result.trials) == 1
    (trial,) = result.trials
    assert seen == [trial]
    assert trial.fits and trial.batch_size == result.batch_size == result.predicted_batch
    assert trial.predicted_bytes == pytest.approx(trial.peak_bytes, rel=1e-6)  # predicted vs measured, per trial
    # a guard under the limit (1/32 of what is left beside the fixed part): the answer is within 4% of the best
    assert 0.96 * largest_fitting(device) <= result.batch_size <= largest_fitting(device)
    assert result.to_dict()["trials"][0]["predicted_bytes"] == trial.predicted_bytes


@pytest.mark.parametrize(
    "device",
    [
        Device(scale=1.3),  # the prediction misses 30% of each image's bytes: the first trial runs out of memory
        Device(scale=1.1),  # 10%: the first trial measures over the limit
        Device(scale=0.7),  # the prediction says 40% too much: a larger batch fits
        Device(overhead=200 * 10**6),  # what the prediction leaves out: 200 MB the trial process holds
        Device(scale=1.05, overhead=-50 * 10**6),
    ],
    ids=["under-30%", "under-10%", "over-40%", "overhead", "mixed"],
)
def test_a_prediction_off_is_corrected_within_3_trials_and_the_answer_was_measured_to_fit(device: Device) -> None:
    result = find(device)
    assert len(device.tried) <= 3
    answer = next(t for t in result.trials if t.batch_size == result.batch_size)
    assert answer.fits and answer.peak_bytes is not None and answer.peak_bytes <= LIMIT
    assert result.batch_size >= 0.9 * largest_fitting(device)
    assert all(t.predicted_bytes is not None for t in result.trials)
    assert result.predicted_peak(result.batch_size) <= LIMIT


def test_a_step_that_cannot_be_predicted_is_searched_as_before_and_says_why() -> None:
    model = ModelPredictions(PARAMS, PER_SAMPLE)
    model.untraceable = True
    device = Device()
    result = find(device, model, start=64)
    assert device.tried[:4] == [64, 128, 256, 512]  # doubling from --start, as before predictions
    assert result.predicted_batch is None and all(t.predicted_bytes is None for t in result.trials)
    assert "cannot be predicted" in result.prediction_note
    assert result.batch_size <= largest_fitting(device)


def test_without_predictions_the_search_is_the_one_before() -> None:
    device = Device()
    result = find_batch_size(CONFIG, capacity=CAPACITY, measure=device, predict=None, start=64)
    assert device.tried[:4] == [64, 128, 256, 512] and len(device.tried) > 3
    assert result.predicted_batch is None and result.prediction_note is None
    # a measure of your own is not what the prediction predicts: "auto" leaves predictions out for it
    again = Device()
    find_batch_size(CONFIG, capacity=CAPACITY, measure=again, start=64)
    assert again.tried == device.tried


def test_when_no_trial_near_the_prediction_fits_the_search_goes_on_below_them() -> None:
    device = Device(scale=4.0)  # the prediction is wildly low: three trials run out of memory
    result = find(device, start=1)
    assert [t.fits for t in result.trials if t.predicted_bytes is not None] == [False, False, False]
    assert "no trial near it fitted" in result.prediction_note
    # halving below them, then as before: far fewer trials than doubling from 1 would take
    assert 1 not in device.tried and len(device.tried) <= 10
    assert 0.9 * largest_fitting(device) <= result.batch_size <= largest_fitting(device)
