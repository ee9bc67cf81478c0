"""What-if advice: the current config beside one change at a time, and the advice after an out-of-memory error.

The rows' arithmetic (bytes saved, the largest batch that then fits, the cheapest change) is checked against a
prediction model with known answers (tests.support.predictions); what each change does to a real step is
checked with the real prediction of tiny-cnn (fake tensors: no memory used).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import predict
from gpu_train_monitor.finder.predicted import PredictedPeaks, largest_batch_under
from gpu_train_monitor.finder.what_if import DOES_NOT_FIT, FITS, TIGHT, oom_advice, verdict, what_if
from tests.support.predictions import ModelPredictions
from tests.support.user_code import importable_folder

CONFIG = RunConfig(device="cpu", model="tiny-cnn", batch_size=64, optimizer="adamw")
GB = 10**9


@pytest.fixture
def user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from importable_folder(tmp_path, monkeypatch)


def rows_by_change(table) -> dict:
    return {row.change: row for row in table.rows}


def test_real_rows_bf16_saves_activations_sgd_saves_a_moment_half_batch_and_checkpointing_save() -> None:
    table = what_if(CONFIG.replace(batch_size=32), 100 * GB, search=False, predict=predict)
    rows = rows_by_change(table)
    current = table.current
    assert set(rows) == {"bf16", "fp16", "channels_last", "optimizer", "activation_checkpointing"} | {
        "half_batch",
        "double_batch",
    }
    bf16 = rows["bf16"].prediction
    assert bf16.activations_bytes < 0.7 * current.activations_bytes  # bf16 activations: half the bytes
    assert rows["bf16"].saved_bytes > 0
    sgd = rows["optimizer"]
    assert sgd.label == "SGD instead of AdamW"
    # AdamW holds two moments per parameter, SGD one momentum buffer: one parameter's worth less
    assert sgd.prediction.optimizer_bytes == pytest.approx(current.optimizer_bytes / 2, rel=0.05)
    assert sgd.saved_bytes == pytest.approx(current.optimizer_bytes - sgd.prediction.optimizer_bytes, rel=0.05)
    half = rows["half_batch"]
    assert half.batch_size == 16 and half.prediction.activations_bytes < 0.6 * current.activations_bytes
    assert rows["double_batch"].saved_bytes < 0  # costs memory: a negative saving
    assert rows["activation_checkpointing"].saved_bytes > 0
    assert all(row.verdict == FITS for row in table.rows) and table.verdict == FITS
    # the blocks checkpointing saves the most in: each by what its rows hold at the peak, with and without
    checkpointed = rows["activation_checkpointing"]
    assert checkpointed.blocks and [size for _, size in checkpointed.blocks] == sorted(
        (size for _, size in checkpointed.blocks), reverse=True
    )
    before = {row.name: row.total_bytes for row in current.modules}
    after = {row.name: row.total_bytes for row in checkpointed.prediction.modules}
    assert all(size == before[name] - after[name] > 0 for name, size in checkpointed.blocks)
    assert all(not row.blocks for row in table.rows if row.change != "activation_checkpointing")


def test_a_model_without_blocks_gets_a_checkpointing_row_saying_why(user_folder: Path) -> None:
    config = RunConfig(device="cpu", model="mymodels:small_net", batch_size=8)
    rows = rows_by_change(what_if(config, 100 * GB, search=False, predict=predict))
    refused = rows["activation_checkpointing"]
    assert refused.total_bytes is None and refused.saved_bytes is None and refused.fits_batch is None
    assert "no blocks to checkpoint" in refused.reason
    assert rows["bf16"].total_bytes is not None  # the other rows are predicted as usual


def test_each_row_says_the_largest_batch_that_then_fits() -> None:
    model = ModelPredictions(params=1_000_000, per_sample=100_000)
    capacity, margin = 2 * 10**8, 0.1
    table = what_if(CONFIG, capacity, margin, predict=model)
    limit = int(capacity * 0.9)
    assert table.limit_bytes == limit
    exact_now = model.largest_under(limit, CONFIG)
    assert exact_now - exact_now // 64 <= table.fits_batch <= exact_now  # within 1/64, never above
    rows = rows_by_change(table)
    exact_bf16 = model.largest_under(limit, CONFIG.replace(amp="bf16"))
    assert exact_bf16 - exact_bf16 // 64 <= rows["bf16"].fits_batch <= exact_bf16
    assert rows["half_batch"].fits_batch == rows["double_batch"].fits_batch == table.fits_batch
    assert rows["optimizer"].saved_bytes == 1_000_000  # SGD: one moment less


def test_the_search_over_predictions_needs_a_handful() -> None:
    model = ModelPredictions(params=1_000_000, per_sample=100_000)
    peaks = PredictedPeaks(CONFIG, predict=model)
    found = largest_batch_under(peaks, 10**9, start=64, max_batch=65536)
    assert found == model.largest_under(10**9, CONFIG)
    assert len(peaks.predictions) <= 4
    assert largest_batch_under(PredictedPeaks(CONFIG, predict=model), 10**5, 64, 65536) == 0  # not even 1 fits
    assert largest_batch_under(PredictedPeaks(CONFIG, predict=model), 10**12, 64, 4096) == 4096  # the cap


def test_fits_tight_and_does_not_fit() -> None:
    assert verdict(89, 100, 0.1) == FITS
    assert verdict(95, 100, 0.1) == TIGHT
    assert verdict(101, 100, 0.1) == DOES_NOT_FIT


def test_oom_advice_names_the_batch_that_fits_and_the_cheapest_change() -> None:
    model = ModelPredictions(params=1_000_000, per_sample=100_000)
    config = CONFIG.replace(batch_size=2000)  # 204 MB: over a 150 MB capacity
    advice = oom_advice(config, 150 * 10**6, 0.1, predict=model)
    assert advice.requested_batch == 2000
    assert 0 < advice.fits_batch < 2000
    # channels_last saves nothing here; bf16 autocast halves the activations: the cheapest that fits
    assert advice.change is not None and advice.change.change == "bf16"
    assert advice.text.startswith(f"batch {advice.fits_batch} fits as configured; batch 2000 fits with bf16")


def test_oom_advice_skips_a_refused_change_and_says_when_no_single_change_is_enough() -> None:
    model = ModelPredictions(params=1_000_000, per_sample=100_000, refuse_checkpointing=True)
    config = CONFIG.replace(batch_size=2000, amp="bf16")  # 104 MB: 4 MB of weights and AdamW, 100 MB activations
    # channels_last and fp16 change nothing; checkpointing (64 MB) is refused; SGD saves 1 MB: 103 MB fits
    advice = oom_advice(config, 103_500_000, 0.0, predict=model)
    assert advice.change is not None and advice.change.change == "optimizer"
    tight = oom_advice(config, 50 * 10**6, 0.0, predict=model)
    assert tight.change is None
    assert "no single change makes batch 2000 fit" in tight.text


def test_an_error_the_prediction_did_not_expect_raises_every_prediction() -> None:
    """The run ran out of memory where the prediction says it fits: the advice believes the error."""
    model = ModelPredictions(params=1_000_000, per_sample=100_000)
    config = CONFIG.replace(batch_size=1000)  # predicted 104 MB
    advice = oom_advice(config, 200 * 10**6, 0.0, predict=model)  # yet it failed under 200 MB
    assert advice.fits_batch < 1000


GPT = RunConfig(device="cpu", model="gpt-tiny", dataset="synthetic-text", seq_len=64, batch_size=8, optimizer="adamw")


def test_a_gpt_gets_half_the_sequence_length_and_checkpointing_per_transformer_block() -> None:
    table = what_if(GPT, 100 * GB, search=False, predict=predict)
    rows = rows_by_change(table)
    half = rows["half_seq_len"]
    assert str(half.label) == "half the sequence length (32)"
    assert half.config_overrides == {"seq_len": 32} and half.batch_size == 8
    assert half.prediction.what == "gpt-tiny at batch 8 x 32 tokens (fp32, adamw) on cpu"
    assert 0 < half.saved_bytes < table.current.activations_bytes  # the weights stay; activations shrink
    checkpointing = rows["activation_checkpointing"]
    assert str(checkpointing.label) == "activation checkpointing per transformer block (2 in all)"
    assert checkpointing.saved_bytes > 0
    assert checkpointing.blocks[0][0].startswith("blocks.")  # a transformer block (a row each) holds the most less
    names = [row.change for row in table.rows]
    assert names.index("half_seq_len") < names.index("half_batch")  # the batch rows stay last
    assert "half_seq_len" not in rows_by_change(what_if(CONFIG, 100 * GB, search=False, predict=predict))
