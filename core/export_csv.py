"""A recorded run as two CSV files that pandas, a spreadsheet or the csv module read as they are.

`run-<id>-steps.csv`: one row per step (step, epoch, loss, smoothed_loss, elapsed_s). `run-<id>-memory.csv`:
one row per report, the throughput and memory sample taken with it. A header row names the columns; numbers
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

from core.outputs import replace_atomically
from core.run_series import StepTable
from core.run_store import ReportRow

STEP_COLUMNS = ("step", "epoch", "loss", "smoothed_loss", "elapsed_s")
MEMORY_COLUMNS = ("step", "elapsed_s", "unix_time", "samples", "samples_per_s", "batch_size", "allocated_bytes",
                  "reserved_bytes", "peak_allocated_bytes", "peak_reserved_bytes", "capacity_bytes",
                  "device_used_bytes", "process_rss_bytes")


def write_run_csv(folder: Path, run_id: int, table: StepTable, reports: Sequence[ReportRow]) -> list[Path]:
    """Write the steps and memory files for run `run_id` into `folder` (which exists); their paths."""
    steps_path = folder / f"run-{run_id}-steps.csv"
    memory_path = folder / f"run-{run_id}-memory.csv"
    step_rows = ([str(step), str(epoch), _number(loss), _number(smoothed), _known(elapsed)]
                 for step, epoch, loss, smoothed, elapsed in zip(table.steps.tolist(), table.epochs.tolist(),
                                                                 table.losses.tolist(), table.smoothed.tolist(),
                                                                 table.elapsed_s.tolist()))
    _write(steps_path, STEP_COLUMNS, step_rows)
    memory_rows = ([_known(value) for value in (
        r.step, r.elapsed_s, r.at, r.samples, r.samples_per_s, r.batch_size, r.allocated_bytes, r.reserved_bytes,
        r.peak_allocated_bytes, r.peak_reserved_bytes, r.capacity_bytes, r.device_used_bytes, r.process_rss_bytes)]
        for r in reports)
    _write(memory_path, MEMORY_COLUMNS, memory_rows)
    return [steps_path, memory_path]


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
