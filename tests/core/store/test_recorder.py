"""The recorder's own rules for the values it stores."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

from gpu_train_monitor.events.events import RunFinished
from gpu_train_monitor.store.recorder import RunRecorder, recording
from gpu_train_monitor.store.run_store import RunStore
from gpu_train_monitor.store.run_writes import _nan_as_null
from tests.support.events import started, summary


def test_nan_is_stored_as_null_and_inf_as_itself() -> None:
    assert [_nan_as_null(value) for value in (None, math.nan, 1.5, 0.0)] == [None, None, 1.5, 0.0]
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (x REAL)")
    db.executemany("INSERT INTO t VALUES (?)", [(_nan_as_null(v),) for v in (math.inf, -math.inf, math.nan)])
    assert db.execute("SELECT x FROM t").fetchall() == [(math.inf,), (-math.inf,), (None,)]


def test_recording_adds_a_recorder_to_the_observers_and_writes_everything_out_at_the_end(tmp_path: Path) -> None:
    """The CLI's and the window's one way to record: the run is in the store once the block has ended."""
    path, observers, warnings = tmp_path / "runs.db", [print], []
    with recording(observers, path, warnings.append) as recorder:
        assert isinstance(recorder, RunRecorder) and observers == [print, recorder]
        recorder(started(epochs=1))
        recorder(RunFinished("completed", 1_950, "", False, summary()))
    with RunStore(path, readonly=True) as store:
        assert [row.status for row in store.list_runs()] == ["completed"]  # the queue was written before the end
    assert warnings == [] and recorder.run_ids == [1]


def test_recording_into_a_store_that_cannot_be_used_warns_once_and_the_block_runs_unrecorded(tmp_path: Path) -> None:
    path = tmp_path / "theirs.db"
    with sqlite3.connect(path) as db:  # another program's database: never written to
        db.execute("CREATE TABLE theirs (x)")
    observers: list = []
    warnings: list[str] = []
    with recording(observers, path, warnings.append) as recorder:
        assert recorder is None and observers == []
    assert len(warnings) == 1 and warnings[0].startswith("this run is not recorded: ")


def test_an_event_recorded_at_its_own_time_keeps_it_and_its_owner(tmp_path: Path) -> None:
    """A comparison on another machine is recorded here as it happened there: its times and its process."""
    path = tmp_path / "runs.db"
    owner = (4242, 1_700_000_000.0, "gpu-box-7")
    with recording([], path, print) as recorder:
        recorder.record_at(started(epochs=1), 1_800_000_000.0, owner)
        recorder.record_at(RunFinished("completed", 1_950, "", False, summary()), 1_800_000_060.0)
    with RunStore(path, readonly=True) as store:
        (row,) = store.list_runs()
    assert (row.host, row.pid, row.started_at, row.finished_at) == ("gpu-box-7", 4242, 1_800_000_000.0, 1_800_000_060.0)
    db = sqlite3.connect(path)
    assert db.execute("SELECT pid_started_at FROM runs").fetchone() == (1_700_000_000.0,)
