"""Will it fit over batch x sequence length: a language model's memory is decided by both, so its prediction is a
grid, one traced step (gpu_train_monitor.engine.prediction.predict: fake tensors, no memory used) per cell, each
against the capacity as the what-if table says it (fits / tight / does not fit).

A cell is one prediction: a GPT's activations grow with batch x seq_len, and with seq_len squared in plain attention
(softmax of QK^T), so no cell is guessed from another. Plain frozen dataclasses: the window works a grid out in a
worker thread and shows it in the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..base.errors import ConfigError
from ..base.text import Message
from ..config.bounds import BOUNDS, FINDER_BOUNDS
from ..config.field_checks import validate_field
from ..config.run_config import RunConfig
from ..config.sequences import is_text_dataset
from ..memory.predict import Prediction
from .what_if import verdict


@dataclass(frozen=True)
class FitCell:
    """One batch size at one sequence length, predicted."""

    batch_size: int
    seq_len: int
    total_bytes: int  # the predicted peak + the overhead outside a traced step (what the verdict is of)
    verdict: str  # FITS / TIGHT / DOES_NOT_FIT (gpu_train_monitor.finder.what_if)
    prediction: Prediction


@dataclass(frozen=True)
class FitGrid:
    """Rows of batch sizes, columns of sequence lengths, each cell predicted against `capacity_bytes`."""

    batch_sizes: tuple[int, ...]
    seq_lens: tuple[int, ...]
    capacity_bytes: int
    margin: float
    cells: tuple[FitCell, ...]  # row by row: batch_sizes[0] at every seq_len first

    @property
    def limit_bytes(self) -> int:
        return int(self.capacity_bytes * (1.0 - self.margin))

    @property
    def complete(self) -> bool:
        """Every cell predicted (a grid reported on the way has the first cells only)."""
        return len(self.cells) == len(self.batch_sizes) * len(self.seq_lens)

    def cell(self, batch_size: int, seq_len: int) -> FitCell | None:
        """The cell of `batch_size` at `seq_len`; None while it is not predicted yet."""
        return next((c for c in self.cells if c.batch_size == batch_size and c.seq_len == seq_len), None)


def check_grid_sizes(config: RunConfig, batch_sizes: Sequence[int], seq_lens: Sequence[int]) -> None:
    """A ConfigError (naming batch_sizes or seq_lens) for a size out of bounds, none given, or sequence lengths for
    a dataset that is not text (its samples have no length)."""
    if not is_text_dataset(config.dataset):
        raise ConfigError(
            "seq_lens",
            Message(
                "sequence lengths apply to text datasets only (synthetic-text, text:PATH), not {dataset}",
                dataset=config.dataset,
            ),
        )
    for field, sizes, bound in (("batch_sizes", batch_sizes, "batch_size"), ("seq_lens", seq_lens, "seq_len")):
        if not sizes:
            raise ConfigError(field, Message("give at least one size"))
        for size in sizes:
            try:
                validate_field(bound, size)
            except ConfigError as exc:
                raise ConfigError(field, exc.detail) from None


def around(value: int, field: str) -> tuple[int, ...]:
    """Half, the value and double, kept inside the field's bounds and without repeats: the grid the window shows
    around the form's batch size and sequence length."""
    bound = BOUNDS[field]
    low, high = int(bound.minimum), int(bound.maximum)
    return tuple(sorted({min(max(v, low), high) for v in (value // 2, value, value * 2)}))


def fit_grid(
    config: RunConfig,
    batch_sizes: Sequence[int],
    seq_lens: Sequence[int],
    capacity_bytes: int,
    margin: float = FINDER_BOUNDS["margin"].default,
    *,
    device: str | None = None,
    overhead_bytes: int = 0,
    predict: Callable[..., Prediction] | None = None,
    on_cell: Callable[[FitGrid], None] | None = None,
) -> FitGrid:
    """Every (batch, seq_len) of `config` predicted on a device of kind `device` (default: the config's) against
    `capacity_bytes`. ConfigError for sizes `check_grid_sizes` refuses; PredictionUnavailable when the step cannot be
    traced (then no cell can). `on_cell(grid)` is handed the grid so far after each cell (a cell is a second or more
    for a large model: the window shows each as it comes)."""
    check_grid_sizes(config, batch_sizes, seq_lens)
    if predict is None:
        from ..engine.prediction import predict
    cells = []
    for batch in batch_sizes:
        for seq_len in seq_lens:
            prediction = predict(config.replace(seq_len=seq_len), batch, device=device)
            total = prediction.total_bytes + overhead_bytes
            cells.append(FitCell(batch, seq_len, total, verdict(total, capacity_bytes, margin), prediction))
            if on_cell is not None:
                on_cell(FitGrid(tuple(batch_sizes), tuple(seq_lens), capacity_bytes, margin, tuple(cells)))
    return FitGrid(tuple(batch_sizes), tuple(seq_lens), capacity_bytes, margin, tuple(cells))
