"""The GPT's memory predicted (gpu_train_monitor.engine.prediction) against the same step run for real on the CPU and
counted the same way, within 10%, over a few batch x sequence length cells: gpt-tiny, and gpt-small cut down to two
narrow blocks (its preset's heads, so its attention splits as gpt-small's does) so that its real steps take a moment.
"""

from __future__ import annotations

import pytest

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import measure, predict

TINY = RunConfig(device="cpu", model="gpt-tiny", dataset="synthetic-text", optimizer="adamw")
SMALL = TINY.replace(model="gpt-small", layers=2, width=192)  # 12 heads of 16


def check_close(config: RunConfig, batch: int, seq_len: int) -> None:
    config = config.replace(seq_len=seq_len)
    predicted, measured = predict(config, batch), measure(config, batch)
    error = predicted.peak_bytes / measured.peak_bytes - 1
    print(
        f"{config.model} {config.attention} batch {batch} x {seq_len}: predicted {predicted.peak_bytes:,} B, "
        f"measured {measured.peak_bytes:,} B, error {error:+.3%}"
    )
    assert abs(error) <= 0.10, f"batch {batch} x {seq_len}: predicted {predicted}, measured {measured}"
    assert predicted.params_bytes == measured.params_bytes
    assert predicted.batch_bytes == measured.batch_bytes


@pytest.mark.parametrize(("batch", "seq_len"), [(4, 32), (4, 128), (16, 64), (32, 128)])
def test_gpt_tiny_prediction_is_within_10_percent_of_its_measured_step(batch: int, seq_len: int) -> None:
    check_close(TINY, batch, seq_len)


@pytest.mark.parametrize(("batch", "seq_len"), [(2, 64), (4, 128), (8, 256)])
def test_a_small_gpt_small_prediction_is_within_10_percent_of_its_measured_step(batch: int, seq_len: int) -> None:
    check_close(SMALL, batch, seq_len)


@pytest.mark.parametrize(("batch", "seq_len"), [(4, 64), (8, 128)])
def test_plain_attention_prediction_is_within_10_percent_of_its_measured_step(batch: int, seq_len: int) -> None:
    check_close(TINY.replace(attention="plain"), batch, seq_len)
