"""A recorded run as CSV files that pandas, a spreadsheet or the csv module read as they are.

`run-<id>-steps.csv`: one row per step (step, epoch, loss, smoothed_loss, elapsed_s). `run-<id>-memory.csv`:
one row per report, the throughput and memory sample taken with it (for a data-parallel run: the whole run's
images/s and rank 0's memory; a text run's last column is its tokens_per_s). A data-parallel run adds
`run-<id>-ranks.csv`: one row per rank per report, by step then rank, with that rank's device, images/s and
memory (see `write_rank_csv` for why a file of its own rather than more columns). A header row names the
columns; numbers
are written at full precision; a loss that was not a number is `nan` (or `inf`), which pandas reads as
such; an unknown value (a step's time across a resume, a device-wide figure the device does not give) is
an empty cell. Each file is written to a temporary name and renamed into place.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..base.outputs import replace_atomically
from ..events.events import SAMPLE_COLUMNS
from ..store.run_store import RankReportRow, ReportRow
from .step_table import StepTable

STEP_COLUMNS = ("step", "epoch", "loss", "smoothed_loss", "elapsed_s")
MEMORY_COLUMNS = ("step", "elapsed_s", "unix_time", "samples", "samples_per_s", "batch_size", *SAMPLE_COLUMNS)
RANK_COLUMNS = ("step", "rank", "device", "elapsed_s", "unix_time", "samples_per_s", *SAMPLE_COLUMNS)


def write_run_csv(
    folder: Path,
    run_id: int,
    table: StepTable,
    reports: Sequence[ReportRow],
    rank_reports: Sequence[RankReportRow] = (),
    tokens_per_sample: int = 0,
) -> list[Path]:
    """Write the steps and memory files for run `run_id` into `folder` (which exists), and the ranks file
    when there are `rank_reports` (a data-parallel run); their paths. `tokens_per_sample`: a text run's seq_len,
    which adds the memory file's last column, tokens_per_s (samples_per_s x seq_len)."""
    steps_path = folder / f"run-{run_id}-steps.csv"
    memory_path = folder / f"run-{run_id}-memory.csv"
    step_rows = (
        [str(step), str(epoch), _number(loss), _number(smoothed), _known(elapsed)]
        for step, epoch, loss, smoothed, elapsed in zip(
            table.steps.tolist(),
            table.epochs.tolist(),
            table.losses.tolist(),
            table.smoothed.tolist(),
            table.elapsed_s.tolist(),
        )
    )
    _write(steps_path, STEP_COLUMNS, step_rows)
    memory_rows = (
        [_known(value) for value in (r.step, r.elapsed_s, r.at, r.samples, r.samples_per_s, r.batch_size, *_sample(r))]
        + ([_known(r.samples_per_s * tokens_per_sample)] if tokens_per_sample else [])
        for r in reports
    )
    _write(memory_path, (*MEMORY_COLUMNS, "tokens_per_s") if tokens_per_sample else MEMORY_COLUMNS, memory_rows)
    if not rank_reports:
        return [steps_path, memory_path]
    return [steps_path, memory_path, write_rank_csv(folder, run_id, reports, rank_reports)]


def write_rank_csv(
    folder: Path, run_id: int, reports: Sequence[ReportRow], rank_reports: Sequence[RankReportRow]
) -> Path:
    """`run-<id>-ranks.csv`: one row per rank per report ("long" layout), its time taken from the report.

    A file of its own, not more columns in the memory file: the memory file keeps the columns it has for
    every run, so a sheet or script made for one run reads a data-parallel one too; and with eight figures
    per rank, columns per rank would run to hundreds at 64 ranks, each rank's figures scattered across the
    sheet. One row per rank keeps the columns the memory file's people already know, plus `rank` and
    `device`: a spreadsheet's filter (or a pivot table, or pandas' `pivot(index="step", columns="rank")`)
    on `rank` gives each rank's series, side by side."""
    path = folder / f"run-{run_id}-ranks.csv"
    times = {r.step: (r.elapsed_s, r.at) for r in reports}
    rows = (
        [
            _known(value)
            for value in (r.step, r.rank, r.device, *times.get(r.step, (None, None)), r.samples_per_s, *_sample(r))
        ]
        for r in rank_reports
    )
    _write(path, RANK_COLUMNS, rows)
    return path


def _sample(row: ReportRow | RankReportRow) -> list[int | None]:
    """The row's memory sample, in `SAMPLE_COLUMNS` order."""
    return [getattr(row, name) for name in SAMPLE_COLUMNS]


def _write(path: Path, header: Sequence[str], rows: Iterable[list[str]]) -> None:
    def write(target: Path) -> None:
        with open(target, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(header)
            writer.writerows(rows)

    replace_atomically(path, write)


def _number(value: float) -> str:
    """A loss at full precision; NaN and infinities as `nan`, `inf`, `-inf` (a diverged run's real values)."""
    return repr(value)


def _known(value: Any) -> str:
    """An empty cell for an unknown value (None, or NaN standing for one), else the number at full precision."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return repr(value) if isinstance(value, float) else str(value)
