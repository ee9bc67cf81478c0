"""What the agent reads of a run for a follower: rows after a cursor in one snapshot, and chunks that never split
a step's rows, keep steps and events in order, and fit on a protocol line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_train_monitor.remote.agent import store_rows
from gpu_train_monitor.remote.wire import protocol
from gpu_train_monitor.store.rows import PHASE_COLUMNS
from gpu_train_monitor.store.run_store import RunNotFound, RunStore
from tests.support.recorded_runs import record_resumed_nan_run, record_run


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, list]:
    path = tmp_path_factory.mktemp("store") / "runs.sqlite3"
    run_id, events = record_run(path, max_steps=12, batch_size=16, report_interval=0.01)
    return path, run_id, events


def test_a_snapshot_holds_the_rows_after_the_cursor_as_the_tables_columns(recorded) -> None:
    path, run_id, _ = recorded
    with RunStore(path) as store:
        whole = store_rows.snapshot(store, run_id)
        later = store_rows.snapshot(store, run_id, after_step=5, after_seq=whole.events[0]["seq"])
    assert [row["step"] for row in whole.steps] == list(range(1, 13))
    assert set(whole.run) == set(protocol.RUN_COLUMNS) and whole.run["status"] == "completed"
    assert whole.live is False and whole.has_rows
    assert all(set(row) == set(protocol.REPORT_COLUMNS) for row in whole.reports)
    assert set(PHASE_COLUMNS) <= set(protocol.REPORT_COLUMNS) and any(row["step_us"] for row in whole.reports)
    assert [row["step"] for row in later.steps] == list(range(6, 13))
    assert all(row["step"] > 5 for row in later.reports) and later.reports
    assert [row["seq"] for row in later.events] == [row["seq"] for row in whole.events[1:]]
    assert later.last_step(5) == 12 and later.last_seq(0) == whole.events[-1]["seq"]


def test_small_chunks_keep_each_step_whole_and_every_row_in_order(recorded) -> None:
    path, run_id, _ = recorded
    with RunStore(path) as store:
        found = store_rows.snapshot(store, run_id)
    limit = 3_000  # the run row alone is ~2 kB: about one step per chunk
    chunks = store_rows.chunks(found, limit)
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk["run"] == found.run
        steps_here = {row["step"] for row in chunk["steps"]}
        assert {row["step"] for row in chunk["reports"]} <= steps_here  # a report travels with its step
        assert len(protocol.encode(chunk)) < 2 * limit + len(protocol.encode({"run": found.run}))
    for table in ("steps", "reports", "events"):
        assert [row for chunk in chunks for row in chunk[table]] == getattr(found, table)
    assert store_rows.chunks(found) == [{**protocol.empty_chunk(found.run), **_tables(found)}]


def _tables(found: store_rows.Snapshot) -> dict:
    return {table: getattr(found, table) for table in ("steps", "reports", "rank_reports", "events")}


def test_a_finished_run_with_nothing_new_is_one_chunk_with_its_row() -> None:
    found = store_rows.Snapshot({"uid": "u", "status": "completed"}, live=False)
    assert store_rows.chunks(found) == [protocol.empty_chunk({"uid": "u", "status": "completed"})]
    assert found.last_step(7) == 7 and found.last_seq(3) == 3


def test_non_finite_losses_travel_as_null(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    _, events = record_run(path, max_steps=2)
    run_id = record_resumed_nan_run(path, events)
    with RunStore(path) as store:
        found = store_rows.snapshot(store, run_id)
    losses = {row["step"]: row["loss"] for row in found.steps}
    assert losses[4] is None  # NaN is stored as NULL
    decoded = protocol.decode(protocol.encode(store_rows.chunks(found)[0]))
    assert {row["step"]: row["loss"] for row in decoded["steps"]}[5] is None  # inf: JSON has no infinity


def test_the_runs_list_has_every_column_and_whether_each_run_is_live(recorded) -> None:
    path, run_id, _ = recorded
    with RunStore(path) as store:
        listed = store_rows.run_list(store)
        assert store_rows.run_list(store, "no-such-model") == []
        assert [row["id"] for row in store_rows.run_list(store, "tiny-cnn")] == [run_id]
        assert store_rows.find_run(store, uid=listed[0]["uid"]) == run_id
        with pytest.raises(RunNotFound):
            store_rows.find_run(store, uid="nobody")
        with pytest.raises(RunNotFound):
            store_rows.find_run(store, run_id=999)
    assert [row["id"] for row in listed] == [run_id]
    assert set(listed[0]) == set(protocol.RUN_LIST_COLUMNS) | {"live"} and listed[0]["live"] is False


def test_a_page_of_rows_is_those_that_fit_and_always_at_least_one() -> None:
    rows = [{"uid": str(n), "config": "x" * 100} for n in range(10)]
    size = len(protocol.encode(rows[0])) + 1
    assert store_rows.fitting(rows, 3 * size) == rows[:3]
    assert store_rows.fitting(rows, 1) == rows[:1]
    assert store_rows.fitting(rows, 10**6) == rows
    assert store_rows.fitting([], 10) == []
