"""Will it fit over batch x sequence length (gpu_train_monitor.finder.fit_grid): one prediction per cell, each against
the capacity; sizes a text model cannot take, or sequence lengths for images, are one clear error."""

from __future__ import annotations

import pytest

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import predict
from gpu_train_monitor.finder.fit_grid import around, check_grid_sizes, fit_grid

GPT = RunConfig(device="cpu", model="gpt-tiny", dataset="synthetic-text", seq_len=64, batch_size=8)


def test_each_cell_is_the_prediction_of_its_batch_at_its_sequence_length() -> None:
    asked: list[tuple[int, int]] = []

    def recorded(config: RunConfig, batch_size: int | None = None, *, device: str | None = None):  # noqa: ANN202
        asked.append((batch_size, config.seq_len))
        return predict(config, batch_size, device=device)

    one = predict(GPT, 4, seq_len=32)
    so_far: list = []
    grid = fit_grid(
        GPT, [4, 8], [32, 64, 128], one.peak_bytes * 4, 0.1, device="cpu", predict=recorded, on_cell=so_far.append
    )
    assert asked == [(4, 32), (4, 64), (4, 128), (8, 32), (8, 64), (8, 128)]
    assert [len(partial.cells) for partial in so_far] == [1, 2, 3, 4, 5, 6]  # each cell reported as it comes
    assert so_far[0].cell(4, 64) is None and not so_far[0].complete and so_far[-1] == grid and grid.complete
    assert [(c.batch_size, c.seq_len) for c in grid.cells] == asked
    assert grid.cell(4, 32).total_bytes == one.peak_bytes  # the same step traced: the same bytes
    for batch in grid.batch_sizes:  # more tokens, more memory: along a row and down a column
        row = [grid.cell(batch, n).total_bytes for n in grid.seq_lens]
        assert row == sorted(row) and len(set(row)) == len(row)
    assert grid.cell(8, 128).total_bytes > grid.cell(4, 128).total_bytes
    limit = grid.limit_bytes
    for cell in grid.cells:
        expected = "fits" if cell.total_bytes <= limit else "tight" if cell.total_bytes <= 4 * one.peak_bytes else None
        assert cell.verdict == (expected or "does not fit")
    assert {c.verdict for c in grid.cells} >= {"fits", "does not fit"}  # the capacity splits this grid


def test_sequence_lengths_are_for_text_models_only() -> None:
    images = RunConfig(device="cpu", model="tiny-cnn", dataset="synthetic")
    with pytest.raises(ConfigError, match="seq_lens: sequence lengths apply to text datasets only"):
        check_grid_sizes(images, [8], [128])


@pytest.mark.parametrize(
    ("batches", "seq_lens", "field"), [([0], [64], "batch_sizes"), ([8], [70000], "seq_lens"), ([8], [], "seq_lens")]
)
def test_sizes_out_of_bounds_name_the_list(batches: list[int], seq_lens: list[int], field: str) -> None:
    with pytest.raises(ConfigError) as raised:
        check_grid_sizes(GPT, batches, seq_lens)
    assert raised.value.field == field


def test_the_windows_grid_is_half_as_set_and_double_within_bounds() -> None:
    assert around(256, "seq_len") == (128, 256, 512)
    assert around(1, "batch_size") == (1, 2)
    assert around(65536, "seq_len") == (32768, 65536)
