"""A memory sample's columns are written once, in MemorySample: the store's tables, the rows read back, the CSV
export and the data-parallel gather row all follow its fields."""

from __future__ import annotations

import csv
import dataclasses
import sqlite3
from pathlib import Path

import numpy as np

from gpu_train_monitor.distributed.gather_row import GatherRow
from gpu_train_monitor.events.events import SAMPLE_COLUMNS, UNKNOWN_SAMPLE_COLUMNS, MemoryBreakdown, MemorySample
from gpu_train_monitor.export.csv_files import MEMORY_COLUMNS, RANK_COLUMNS, write_run_csv
from gpu_train_monitor.export.step_table import StepTable
from gpu_train_monitor.store.rows import PHASE_COLUMNS, RankReportRow, ReportRow
from gpu_train_monitor.store.schema import migrate

# what stores made by every earlier version hold: the derived tables must keep to it (a new field in MemorySample
# needs a migration of its own that adds its column)
STORED = [
    ("allocated_bytes", "INTEGER", 1),
    ("reserved_bytes", "INTEGER", 1),
    ("peak_allocated_bytes", "INTEGER", 1),
    ("peak_reserved_bytes", "INTEGER", 1),
    ("capacity_bytes", "INTEGER", 1),
    ("device_used_bytes", "INTEGER", 0),
    ("process_rss_bytes", "INTEGER", 1),
]


def test_the_columns_are_the_samples_byte_counts_in_field_order() -> None:
    names = [f.name for f in dataclasses.fields(MemorySample)]
    assert list(SAMPLE_COLUMNS) == [name for name in names if name.endswith("_bytes")]
    assert UNKNOWN_SAMPLE_COLUMNS == {"device_used_bytes"}  # the one `int | None` among them
    sample = MemorySample(1.0, "cuda:0", 1, 2, 3, 4, 5, None, 7, True)
    assert sample.byte_counts() == dict(zip(SAMPLE_COLUMNS, (1, 2, 3, 4, 5, None, 7)))


def test_the_store_tables_and_rows_hold_the_sample_columns_as_stores_always_had_them() -> None:
    """Together and in order, as version 1 made them: last in `rank_reports`; in `reports`, before the step phases'
    columns that version 6 added after them."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    migrate(db)
    for table, row, after in (("reports", ReportRow, len(PHASE_COLUMNS)), ("rank_reports", RankReportRow, 0)):
        columns = [
            (name, kind, notnull)
            for _, name, kind, notnull, _, _ in db.execute(f"PRAGMA table_info({table})").fetchall()
        ]
        end = len(columns) - after
        assert columns[end - len(SAMPLE_COLUMNS) : end] == STORED
        assert [name for name, _, _ in STORED] == list(SAMPLE_COLUMNS)
        assert columns[end:] == [(name, "INTEGER", 0) for name in PHASE_COLUMNS[:after]]  # NULL: steps not timed
        names = [f.name for f in dataclasses.fields(row)]  # the row: the table's columns but run_id
        assert names == [name for name, _, _ in columns if name != "run_id"]


def test_the_csv_memory_columns_hold_each_sample_column_s_own_value(tmp_path: Path) -> None:
    assert MEMORY_COLUMNS[-len(SAMPLE_COLUMNS) :] == RANK_COLUMNS[-len(SAMPLE_COLUMNS) :] == SAMPLE_COLUMNS
    sample = {name: 1000 + i for i, name in enumerate(SAMPLE_COLUMNS)}  # a different number in every column
    report = ReportRow(
        step=5, at=1e9, elapsed_s=2.0, samples=40, samples_per_s=20.0, batch_size=8, total_steps=9, eta_s=None, **sample
    )
    rank = RankReportRow(step=5, rank=1, device="cpu", samples_per_s=10.0, **sample)
    empty = np.array([], dtype=np.float64)
    table = StepTable(np.array([], dtype=np.int64), np.array([], dtype=np.int64), empty, empty, empty, empty, 0.0)
    paths = write_run_csv(tmp_path, 1, table, [report], [rank])
    for path in paths[1:]:
        with open(path, newline="", encoding="utf-8") as handle:
            (row,) = list(csv.DictReader(handle))
        assert {name: int(row[name]) for name in SAMPLE_COLUMNS} == sample


def test_a_gather_row_carries_every_sample_column_and_the_breakdown_there_and_back() -> None:
    memory = {name: 10**9 + i for i, name in enumerate(SAMPLE_COLUMNS)}
    memory["device_used_bytes"] = None  # unknown on this device: comes back unknown
    breakdown = MemoryBreakdown(
        12, 1, 2, 3, 4, 5, 6, (("forward", 7), ("backward", 8), ("optimizer", 9)), "saved-tensors", rank=1
    )
    row = GatherRow(0.25, 64, memory, stop=False, pause=True, clear=True, since_breakdown=1e9, breakdown=breakdown)
    packed = row.pack()
    assert len(packed) == GatherRow.SIZE
    assert GatherRow.unpack([*packed, 2.5, 2.25], rank=1) == row  # its losses follow the row
    quiet = dataclasses.replace(row, breakdown=None, pause=False)
    assert GatherRow.unpack(quiet.pack(), rank=0) == quiet
    assert list(row.memory) == list(SAMPLE_COLUMNS)
