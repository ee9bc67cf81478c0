"""The run store: what a recorded run keeps, and stores that cannot be used.

Runs are real TrainingSessions (tiny-cnn on the CPU, a few steps) recorded by a real RunRecorder; a run killed
mid-way and a store read-only for the CLI's user run the real CLI in tests/e2e/test_run_store_processes.py.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import math
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from gpu_train_monitor.cli.main import main
from gpu_train_monitor.compare.comparison import Comparison
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import STEP_PHASES, ContenderEvent, Event, RunFinished, RunStarted, StepsReported
from gpu_train_monitor.store.connection import store_problem
from gpu_train_monitor.store.recorder import RunRecorder, open_recorder
from gpu_train_monitor.store.rows import PHASE_COLUMNS, ReportRow, phase_values
from gpu_train_monitor.store.run_store import RunNotFound, RunStore, StoreError, default_store_path, process_alive
from gpu_train_monitor.store.schema import APPLICATION_ID, SCHEMA_VERSION, application_id, migrate, schema_version
from tests.support.recorded_runs import another_programs_database

FAST = dict(device="cpu", model="tiny-cnn", synthetic_samples=256, batch_size=32, report_interval=0.01)
CLI_FAST = ["--device", "cpu", "--model", "tiny-cnn", "--synthetic-samples", "256", "--batch-size", "32"]
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
VERDICTS = ("input-bound", "compute-bound")


def record(path: Path, **overrides: object) -> tuple[RunFinished, list[Event], int]:
    """Train one recorded run; returns its final event, every event, and its id in the store."""
    events: list[Event] = []
    recorder = RunRecorder(path)
    finished = TrainingSession(RunConfig(**{**FAST, **overrides}), [events.append, recorder]).run()  # type: ignore[arg-type]
    recorder.close()
    assert recorder.problem is None and recorder.run_id is not None
    return finished, events, recorder.run_id


def stored_phases(row: ReportRow) -> dict[str, int | None]:
    return {name: getattr(row, name) for name in PHASE_COLUMNS}


def insert_old_run(db: sqlite3.Connection) -> None:
    """A finished run's row, as every schema version has had one (an old store's run)."""
    db.execute(
        "INSERT INTO runs (uid, started_at, heartbeat_at, finished_at, status, pid, pid_started_at, host, "
        "model, dataset, device, device_name, placement, batch_size, total_steps, steps, config, started) "
        "VALUES ('u1', 1.0, 2.0, 2.0, 'completed', 1, 1.0, 'h', 'resnet18', 'synthetic', 'cuda:0', 'GPU', "
        "'resident', 64, 2, 2, '{}', '{}')"
    )


def reported_losses(events: list[Event]) -> list[float]:
    return [loss for event in events if isinstance(event, StepsReported) for loss in event.losses]


def test_a_recorded_run_keeps_every_step_its_memory_epochs_and_summary(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    finished, events, run_id = record(path, max_steps=12, epochs=2)
    with RunStore(path) as store:
        run = store.run(run_id)
        assert (run.status, run.steps, run.model, run.device, run.live) == ("completed", 12, "tiny-cnn", "cpu", False)
        assert run.finished_at is not None and run.finished_at >= run.started_at
        series = store.steps(run_id)
        assert series.steps == tuple(range(1, 13))
        assert series.losses == pytest.approx(reported_losses(events))
        reports = store.reports(run_id)
        assert [r.step for r in reports] == [e.step for e in events if isinstance(e, StepsReported)]
        assert all(r.process_rss_bytes > 0 and r.capacity_bytes > 0 for r in reports)
        assert run.loss_last == pytest.approx(finished.summary.loss_last)
        assert run.samples_per_s == pytest.approx(finished.summary.samples_per_s)
        reported = [e.phases for e in events if isinstance(e, StepsReported)]
        assert [stored_phases(r) for r in reports] == [phase_values(p) for p in reported] and any(reported)
        for row, phases in zip(reports, reported):  # each report's phases (or None), to the microsecond
            assert row.phases == phases or row.phases.seconds == pytest.approx(phases.seconds, abs=5e-7)
        summary = store.summary(run_id)
        assert summary["steps"] == 12
        assert summary["step_phases_s"] == finished.summary.step_phases_s and summary["verdict"] in VERDICTS
        assert (summary["verdict"], summary["verdict_text"]) == (
            finished.summary.verdict,
            finished.summary.verdict_text,
        )
        assert store.config(run_id)["batch_size"] == 32
        assert store.started(run_id)["run_uid"] == run.uid
        epochs = store.events(run_id, kinds=("EpochEnded",))
        assert [e.data["epoch"] for e in epochs] == [1, 2] and epochs[-1].data["val_loss"] > 0


def test_history_is_searchable_sortable_and_editable(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    _, _, first = record(path, max_steps=4)
    _, _, second = record(path, max_steps=8, batch_size=16)
    with RunStore(path) as store:
        assert [r.id for r in store.list_runs()] == [second, first]  # newest first
        assert [r.id for r in store.list_runs(order="steps", descending=False)] == [first, second]
        store.rename(first, "  baseline  ")
        store.annotate(first, "before the data change")
        assert [r.id for r in store.list_runs("baseline")] == [first]
        assert [r.id for r in store.list_runs("data change")] == [first]
        assert store.run(first).title == "baseline" and store.run(second).title.startswith(f"#{second} tiny-cnn")
        store.delete(first)
        assert [r.id for r in store.list_runs()] == [second]
        assert store.steps(first).steps == ()  # its steps went with it
        with pytest.raises(RunNotFound, match=f"no run {first}"):
            store.run(first)


def test_a_comparison_records_each_of_its_runs_with_its_label(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    recorder = RunRecorder(path)
    Comparison(RunConfig(**FAST, max_steps=3), [{"batch_size": 16}, {"batch_size": 32}], [recorder]).run()
    recorder.close()
    with RunStore(path) as store:
        runs = store.list_runs(order="started_at", descending=False)
    assert [(r.label, r.batch_size, r.steps, r.status) for r in runs] == [
        ("batch_size=16", 16, 3, "completed"),
        ("batch_size=32", 32, 3, "completed"),
    ]


def test_a_wrapped_runs_label_comes_with_its_events_alone(tmp_path: Path) -> None:
    """The recorder needs nothing but the ContenderEvents (no ComparisonStarted) to label a comparison's run."""
    _, events, _ = record(tmp_path / "first.sqlite3", max_steps=2)
    path = tmp_path / "runs.sqlite3"
    recorder = RunRecorder(path)
    for event in events:
        recorder(ContenderEvent(1, event, "resident"))
    recorder.close()
    with RunStore(path) as store:
        assert [(r.label, r.status) for r in store.list_runs()] == [("resident", "completed")]


def test_a_resume_of_a_run_that_went_on_past_its_checkpoint_is_a_branch_never_a_rewrite(tmp_path: Path) -> None:
    """What a resume from a checkpoint at step 5 emits (the same run_uid, start_step 5), replayed against a
    run that finished at step 8: the recorded run stays as it was, and the resume is a run of its own that
    starts with the 5 steps they share."""
    path = tmp_path / "runs.sqlite3"
    _, events, run_id = record(path, max_steps=8)
    started = next(e for e in events if isinstance(e, RunStarted))
    template = next(e for e in events if isinstance(e, StepsReported))
    recorder = RunRecorder(path)
    recorder(dataclasses.replace(started, start_step=5))
    for step in range(6, 10):  # what the resumed process reports: steps 6..9, one a report
        recorder(dataclasses.replace(template, step=step, first_step=step, losses=(100.0 + step,)))
    recorder(events[-1])
    recorder.close()
    with RunStore(path) as store:
        original, branch = store.run(run_id), store.run(recorder.run_id)
        assert branch.id != run_id and branch.label == f"resumed from #{run_id} at step 5"
        assert (original.steps, original.resumes, store.steps(run_id).steps) == (8, 0, tuple(range(1, 9)))
        assert all(loss < 100 for loss in store.steps(run_id).losses)
        series = store.steps(branch.id)
        assert series.steps == tuple(range(1, 10))
        assert series.losses[:5] == store.steps(run_id).losses[:5]  # the shared part, copied
        assert all(loss > 100 for loss in series.losses[5:])


def test_a_diverged_runs_nan_loss_is_kept_as_nan(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    finished, events, run_id = record(
        path, model="squeezenet1_1", optimizer="adamw", lr=10.0, batch_size=16, max_steps=40
    )
    assert finished.status == "diverged"
    with RunStore(path) as store:
        row = store.run(run_id)
        losses = store.steps(run_id).losses
    assert row.status == "diverged"
    # the Runs table's loss is the last step's: a run that ended in nan has no finite last loss to show
    assert row.loss_last is None or math.isinf(row.loss_last)
    assert any(math.isnan(loss) or math.isinf(loss) for loss in losses)
    assert len(losses) == finished.step


def test_a_killed_recorder_is_dead_at_once_and_a_live_one_survives_a_clock_step() -> None:
    host, now = socket.gethostname(), time.time()
    me = psutil.Process()
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    while psutil.Process(zombie.pid).status() != psutil.STATUS_ZOMBIE:  # exited, not yet waited for
        time.sleep(0.01)
    try:
        assert not process_alive(zombie.pid, psutil.Process(zombie.pid).create_time(), host, now)
    finally:
        zombie.wait()
    assert not process_alive(zombie.pid, 0.0, host, now)  # gone: dead even with a fresh heartbeat
    assert process_alive(me.pid, me.create_time(), host, now - 3600)  # same pid, same start: alive
    assert process_alive(me.pid, me.create_time() + 30, host, now)  # clock stepped, heartbeat fresh: alive
    assert not process_alive(me.pid, me.create_time() + 30, host, now - 60)  # stale and another start: reused pid
    assert process_alive(1, 0.0, "another-host", now - 5)  # another host: the heartbeat alone decides
    assert not process_alive(1, 0.0, "another-host", now - 600)


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_a_store_with_an_older_schema_is_migrated_keeping_its_runs(tmp_path: Path, version: int) -> None:
    """Made before stores were marked with the application id: recognised by its tables, then marked."""
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db, target=version)
    db.execute("PRAGMA application_id = 0")  # as every store made before the mark
    insert_old_run(db)
    db.execute("INSERT INTO steps VALUES (1, 1, 1, 2.5), (1, 2, 1, 2.25)")
    db.close()
    with RunStore(path) as store:
        assert schema_version(store.connection) == SCHEMA_VERSION == 6
        assert application_id(store.connection) == APPLICATION_ID
        run = store.list_runs()[0]
        assert (run.model, run.name, run.resumes, store.steps(run.id).losses) == ("resnet18", "", 0, (2.5, 2.25))
        assert (run.world_size, run.devices, store.rank_reports(run.id)) == (1, "cuda:0", [])  # an ordinary run
        store.rename(run.id, "from the old store")
        assert store.run(run.id).name == "from the old store"
        store.delete(run.id)  # the new table's foreign key does not stand in the way
        assert store.list_runs() == []


def test_a_version_5_store_gains_the_phase_columns_and_its_reports_read_back_untimed(tmp_path: Path) -> None:
    """Reports recorded before steps were timed: every phase column NULL, `phases` None; a new report has them."""
    path = tmp_path / "v5.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db, target=5)
    insert_old_run(db)
    db.execute("INSERT INTO reports VALUES (1, 2, 2.0, 1.0, 128, 128.0, 64, 2, NULL, 1, 2, 3, 4, 5, NULL, 6)")
    db.close()
    with RunStore(path) as store:
        assert schema_version(store.connection) == SCHEMA_VERSION == 6
        columns = [name for (name,) in store.connection.execute("SELECT name FROM pragma_table_info('reports')")]
        assert columns[-len(PHASE_COLUMNS) :] == list(PHASE_COLUMNS) == [*(f"{p}_us" for p in STEP_PHASES), "step_us"]
        (old,) = store.reports(store.list_runs()[0].id)
        assert (old.step, old.process_rss_bytes, old.phases, old.data_us, old.step_us) == (2, 6, None, None, None)
    _, events, run_id = record(path, max_steps=4)
    with RunStore(path) as store:
        reported = [phase_values(e.phases) for e in events if isinstance(e, StepsReported)]
        assert [stored_phases(r) for r in store.reports(run_id)] == reported
        assert any(r.phases is not None and r.step_us > 0 for r in store.reports(run_id))


def test_a_store_from_a_newer_version_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # a newer version marks its stores too
    db.execute("PRAGMA user_version = 99")
    db.close()
    with pytest.raises(StoreError, match="newer version of this app"):
        RunStore(path)


def test_a_damaged_store_is_one_warning_and_the_run_still_trains(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.sqlite3"
    path.write_bytes(b"this is not an SQLite file " * 200)
    with pytest.raises(StoreError, match="damaged"):
        RunStore(path)
    code = main(["run", *CLI_FAST, "--max-steps", "3", "--runs-db", str(path)])
    err = capsys.readouterr().err
    assert code == 0
    assert "warning: this run is not recorded: the run store" in err and "damaged" in err
    assert "Traceback" not in err and "recorded as run" not in err
    assert path.read_bytes().startswith(b"this is not an SQLite file")  # the user's file is left alone


def test_a_store_locked_for_good_stops_recording_not_training(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    RunStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer that never lets go
    problems: list[str] = []
    try:
        recorder = RunRecorder(path, on_problem=problems.append, patience_s=0.0)
        finished = TrainingSession(RunConfig(**FAST, max_steps=4), [recorder]).run()
        recorder.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert finished.status == "completed"
    assert len(problems) == 1 and "locked by another process" in problems[0] and "unrecorded" in problems[0]


def test_a_store_busy_for_a_while_loses_nothing(tmp_path: Path) -> None:
    """Another process writing for longer than SQLite's own wait (a large delete): the writer tries again."""
    path = tmp_path / "runs.sqlite3"
    RunStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    problems: list[str] = []
    recorder = RunRecorder(path, on_problem=problems.append)
    events: list[Event] = []
    finished = TrainingSession(RunConfig(**FAST, max_steps=6), [events.append, recorder]).run()
    time.sleep(4.0)  # past the 3 s busy timeout: the first write has failed and waits to try again
    holder.execute("ROLLBACK")
    holder.close()
    recorder.close(timeout_s=30)
    assert problems == [] and finished.status == "completed"
    with RunStore(path) as store:
        run = store.run(recorder.run_id)
        assert (run.status, store.steps(run.id).losses) == ("completed", pytest.approx(tuple(reported_losses(events))))


def test_processes_creating_a_new_store_at_once_all_record(tmp_path: Path) -> None:
    """A sweep script starting several runs on a new machine: each migration is applied once, by whoever
    comes first (threads stand in for the processes: each opens its own connection)."""
    import threading

    for trial in range(40):  # the race is rare: many tries
        path = tmp_path / f"new-{trial}.sqlite3"
        errors: list[BaseException] = []
        barrier = threading.Barrier(4)

        def open_store() -> None:
            barrier.wait()
            try:
                RunStore(path).close()
            except BaseException as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=open_store) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert errors == []
        with RunStore(path) as store:
            assert schema_version(store.connection) == SCHEMA_VERSION


def test_another_programs_database_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "measurements.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE measurements (x REAL)")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="is not a run store"):
        RunStore(path)
    assert path.read_bytes() == before


def test_a_full_store_is_named_as_such(tmp_path: Path) -> None:
    """SQLite's real error when its file cannot grow (a page limit stands in for a full disk)."""
    path = tmp_path / "runs.sqlite3"
    RunStore(path).close()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA max_page_count = 8")
    with pytest.raises(sqlite3.OperationalError) as error:
        db.execute("CREATE TABLE filler (x)")
        for _ in range(100):
            db.execute("INSERT INTO filler VALUES (randomblob(4096))")
    db.close()
    assert store_problem(path, error.value) == f"the disk holding the run store {path} is full"


def test_another_programs_versioned_database_is_one_warning_left_untouched_and_the_run_trains(tmp_path: Path) -> None:
    """The window's and the CLI's path (open_recorder): one warning, training goes on, the file unchanged."""
    path = tmp_path / "theirs.db"
    digest = another_programs_database(path)
    warnings: list[str] = []
    recorder = open_recorder(path, warnings.append)
    finished = TrainingSession(RunConfig(**FAST, max_steps=3), [] if recorder is None else [recorder]).run()
    assert recorder is None and finished.status == "completed"
    assert warnings == [
        f"this run is not recorded: {path} is not a run store: it is an SQLite database of another "
        "program (it is neither empty nor marked as a run store); give --runs-db a new file name"
    ]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert [p.name for p in tmp_path.iterdir()] == ["theirs.db"]  # no -wal, -shm or -journal beside it either
    with pytest.raises(StoreError, match="is not a run store"):
        RunStore(path, readonly=True)


def test_only_a_new_or_empty_file_becomes_a_store(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    with RunStore(empty) as store:
        assert application_id(store.connection) == APPLICATION_ID
    marked = tmp_path / "marked.db"  # another program's mark, no tables yet
    db = sqlite3.connect(marked)
    db.execute("PRAGMA application_id = 1234")
    db.close()
    near = tmp_path / "near.db"  # our version 3 tables and one more: not a store of ours
    db = sqlite3.connect(near, isolation_level=None)
    migrate(db, target=3)
    db.execute("PRAGMA application_id = 0")
    db.execute("CREATE TABLE extra (x)")
    db.close()
    for path in (marked, near):
        before = path.read_bytes()
        with pytest.raises(StoreError, match="is not a run store"):
            RunStore(path)
        assert path.read_bytes() == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_the_store_is_refused_at_once_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SQLite would block for good reading the pipe (deaf to Ctrl+C): the CLI runs in a thread with a
    deadline, and a regression feeds the pipe so that the thread ends."""
    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(main(["runs", "list", "--runs-db", str(fifo)])), daemon=True)
    thread.start()
    thread.join(30)
    if thread.is_alive():
        with contextlib.suppress(OSError):
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.write(writer, b"not a database" * 400)
            os.close(writer)
    assert not thread.is_alive(), "a FIFO as the store hangs"
    err = capsys.readouterr().err
    assert codes == [2] and err == (
        f"gpu-train-monitor: error: the run store {fifo} is a named pipe (FIFO), not a "
        "file; give --runs-db a file name\n"
    )


def test_a_device_or_a_folder_as_the_store_is_named_for_what_it_is(tmp_path: Path) -> None:
    journal = Path("/dev/null-journal")
    existed = journal.exists()
    with pytest.raises(StoreError) as error:
        RunStore("/dev/null")
    assert str(error.value) == "the run store /dev/null is a device, not a file; give --runs-db a file name"
    assert journal.exists() == existed  # as root, SQLite wrote /dev/null-journal
    for readonly in (False, True):
        with pytest.raises(StoreError) as error:
            RunStore(tmp_path, readonly=readonly)
        assert str(error.value) == (
            f"the run store {tmp_path} is a folder; give --runs-db a file name, such as {tmp_path / 'runs.sqlite3'}"
        )


def test_the_default_store_moves_once_into_a_folder_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store at the data folder's top (where earlier versions kept it, the parent of checkpoints/ that
    Resume's dialog opens) moves into runs/ with its -wal and -shm, keeping its runs; once moved, or when the
    new one exists, nothing moves."""
    import platformdirs

    monkeypatch.delenv("GPU_TRAIN_MONITOR_RUNS_DB", raising=False)
    monkeypatch.setattr(platformdirs, "user_data_dir", lambda name: str(tmp_path / name))
    data = tmp_path / "gpu-train-monitor"
    data.mkdir()
    old = data / "runs.sqlite3"
    _, _, run_id = record(old, max_steps=2)
    holder = sqlite3.connect(old, isolation_level=None)  # kept open: its -wal and -shm exist
    holder.execute("SELECT count(*) FROM runs").fetchone()
    assert Path(f"{old}-wal").exists() and Path(f"{old}-shm").exists()
    new = default_store_path()
    holder.close()
    assert new == data / "runs" / "runs.sqlite3"
    assert sorted(p.name for p in data.iterdir()) == ["runs"]
    with RunStore(new) as store:
        assert store.run(run_id).steps == 2
    old.write_bytes(b"")  # a file at the old place again: the new store stays as it is
    assert default_store_path() == new and old.exists()
    with RunStore(new) as store:
        assert [run.id for run in store.list_runs()] == [run_id]


def test_a_copied_run_is_never_this_machines_process_even_under_the_same_host_name(tmp_path):
    """A mirror's copy of a run from a machine named like this one names a pid of that machine: here it could be any
    process (this test's own). It is live only while its heartbeat is recent, as any run of another host."""
    import os
    import socket
    import time

    import psutil

    from gpu_train_monitor.store.run_store import STALE_AFTER_S

    me = psutil.Process()
    columns = ("uid", "started_at", "heartbeat_at", "status", "pid", "pid_started_at", "host", "model", "dataset")
    columns += ("device", "device_name", "placement", "batch_size", "total_steps", "config", "started", "origin")
    with RunStore(tmp_path / "runs.sqlite3") as store:
        for uid, heartbeat, origin in (("fresh", time.time(), "gpu-box"), ("stale", 1.0, "gpu-box"), ("mine", 1.0, "")):
            values = (uid, 1.0, heartbeat, "running", os.getpid(), me.create_time(), socket.gethostname(), "m", "d")
            values += ("cpu", "cpu", "stream", 8, 5, "{}", "{}", origin)
            store.connection.execute(f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('?' * 17)})", values)
        store.connection.commit()
        live = {run.uid: run.live for run in store.list_runs()}
        assert live == {"fresh": True, "stale": False, "mine": True}  # "mine": this very process, recorded here
        assert STALE_AFTER_S < time.time() - 1.0
        store.mark_interrupted()
        assert {run.uid: run.status for run in store.list_runs()} == {
            "fresh": "running",
            "stale": "interrupted",
            "mine": "running",
        }
