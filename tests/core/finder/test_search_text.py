"""The batch-size finder on a text model: it searches the batch at the config's sequence length, never another
(every prediction and every trial is of that length), so a longer sequence finds a smaller batch."""

from __future__ import annotations

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import predict
from gpu_train_monitor.finder.search import find_batch_size

GPT = RunConfig(device="cpu", model="gpt-tiny", dataset="synthetic-text", seq_len=64, batch_size=8)


def search(config: RunConfig, capacity: int) -> tuple[int, set[int]]:
    """The answer and the sequence lengths that the predictions and the trials were of. A trial's peak is the
    step's prediction (a device whose memory the trace counts exactly), so no real step runs."""
    lengths: set[int] = set()

    def predicted(config: RunConfig, batch_size: int | None = None, *, device: str | None = None):  # noqa: ANN202
        lengths.add(config.seq_len)
        return predict(config, batch_size, device=device)

    def trial(config: RunConfig, batch: int, steps: int) -> int | None:
        lengths.add(config.seq_len)
        peak = predict(config, batch).peak_bytes
        return None if peak > capacity else peak

    result = find_batch_size(config, capacity=capacity, measure=trial, predict=predicted, overhead_bytes=0)
    return result.batch_size, lengths


def test_the_finder_searches_the_batch_at_the_configs_sequence_length() -> None:
    capacity = predict(GPT, 64).peak_bytes * 2
    at_64, lengths = search(GPT, capacity)
    assert lengths == {64}
    assert predict(GPT, at_64).peak_bytes <= capacity * 0.9 < predict(GPT, at_64 + at_64 // 16 + 1).peak_bytes
    at_256, lengths = search(GPT.replace(seq_len=256), capacity)
    assert lengths == {256}
    assert 0 < at_256 < at_64 / 2  # four times the tokens in each sequence: well under half the batch
