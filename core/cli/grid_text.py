"""`predict --seq-lens`'s grid as text: rows of batch sizes, columns of sequence lengths, each cell the predicted
peak and whether it fits (gpu_train_monitor.finder.fit_grid)."""

from __future__ import annotations

import argparse
from typing import Any

from ..base.text import format_bytes

CELL = 25  # "123.45 GB does not fit" and three spaces


def seq_lens(text: str) -> list[int]:
    """argparse's type for --seq-lens: 256,512,1024."""
    try:
        lens = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of sequence lengths, e.g. 256,512,1024") from None
    if not lens:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of sequence lengths, e.g. 256,512,1024")
    return lens


def grid_lines(grid: Any) -> list[str]:
    """The table: a header of sequence lengths, then one line per batch size."""
    lines = [f"{'batch':>7} " + "".join(f"{f'seq len {n:,}':>{CELL}}" for n in grid.seq_lens)]
    for batch in grid.batch_sizes:
        cells = (grid.cell(batch, n) for n in grid.seq_lens)
        lines.append(
            f"{batch:>7} " + "".join(f"{format_bytes(c.total_bytes) + ' ' + c.verdict:>{CELL}}" for c in cells)
        )
    return lines


def largest_fitting_lines(grid: Any) -> list[str]:
    """Per sequence length, the largest batch of the grid that fits (the finder searches between them)."""
    said = []
    for n in grid.seq_lens:
        fitting = [c.batch_size for c in grid.cells if c.seq_len == n and c.verdict == "fits"]
        said.append(f"{max(fitting) if fitting else 'none'} at {n:,} tokens")
    return ["largest batch of these that fits: " + ", ".join(said)]
