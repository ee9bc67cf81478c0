"""Stores with runs in them, made without training: recorded event sequences, a resumed run with a NaN, and
another program's SQLite file (which the store must refuse untouched)."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import sqlite3
from pathlib import Path

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import Event, RunFinished, RunStarted, StepsReported
from gpu_train_monitor.store.recorder import RunRecorder


def record_run(path: Path, **overrides: object) -> tuple[int, list[Event]]:
    """Train and record one real run; its id in the store and every event it emitted."""
    events: list[Event] = []
    recorder = RunRecorder(path)
    TrainingSession(RunConfig(**{**FAST, **overrides}), [events.append, recorder]).run()  # type: ignore[arg-type]
    recorder.close()
    assert recorder.problem is None and recorder.run_id is not None
    return recorder.run_id, events


def record_resumed_nan_run(path: Path, events: list[Event]) -> int:
    """Record, from a real run's events, a run that reports steps 1..4 one by one, is killed, resumed from step 2,
    then reports steps 3-4 (loss 1.5, NaN) in one report and step 5 (inf) in another."""
    started = next(e for e in events if isinstance(e, RunStarted))
    template = next(e for e in events if isinstance(e, StepsReported))
    finished = next(e for e in events if isinstance(e, RunFinished))
    started = dataclasses.replace(started, run_uid="resumed-with-nan")
    recorder = RunRecorder(path)
    recorder(started)
    for step, loss in ((1, NAN_RUN_LOSSES[0]), (2, NAN_RUN_LOSSES[1]), (3, 9.0), (4, 9.0)):
        recorder(dataclasses.replace(template, step=step, first_step=step, losses=(loss,)))
    recorder.close()
    # the process dies here (what RunStore.mark_interrupted records for a dead pid), then resumes from step 2
    db = sqlite3.connect(path)
    db.execute("UPDATE runs SET status = 'interrupted' WHERE uid = 'resumed-with-nan'")
    db.commit()
    db.close()
    recorder = RunRecorder(path)
    recorder(dataclasses.replace(started, start_step=2))  # steps 3 and 4 are trained again
    recorder(dataclasses.replace(template, step=4, first_step=3, losses=tuple(NAN_RUN_LOSSES[2:4])))
    recorder(dataclasses.replace(template, step=5, first_step=5, losses=tuple(NAN_RUN_LOSSES[4:])))
    recorder(dataclasses.replace(finished, status="diverged", step=5, message="the loss is inf at step 5"))
    recorder.close()
    assert recorder.problem is None and recorder.run_id is not None
    return recorder.run_id


def another_programs_database(path: Path) -> str:
    """Another program's SQLite file that looks like an old store of ours (user_version 1, a table `runs`);
    returns its sha256."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 1")
    db.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, title TEXT)")
    db.execute("INSERT INTO runs (title) VALUES ('theirs')")
    db.commit()
    db.close()
    return hashlib.sha256(path.read_bytes()).hexdigest()


FAST = dict(device="cpu", model="tiny-cnn", synthetic_samples=256, batch_size=32, report_interval=0.01)

NAN_RUN_LOSSES = [2.0, 1.8, 1.5, math.nan, math.inf]  # steps 1..5 after the resume
