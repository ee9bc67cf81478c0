"""The SQL a run's events become, for the recorder's writer thread (gpu_train_monitor.store.recorder): a run started,
resumed or branched, its reports, its end and its other events, each as rows of the run store.

Its own module because what each event writes (and how a resume continues or branches a recorded run) is a
job apart from the recorder's queue, thread, retries and failure handling. Every function runs inside the
writer's transaction and touches nothing but `db`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sqlite3
from typing import Any

from ..base.outputs import strict_json
from ..base.text import Message, message_to_json
from ..events.events import RunFinished, RunStarted, StepsReported
from .rows import phase_values
from .run_store import RANK_REPORT_COLUMNS, REPORT_COLUMNS, message_json, process_alive


def begin_run(
    db: sqlite3.Connection, at: float, event: RunStarted, label: str, owner: tuple[int, float, str]
) -> tuple[int, int, float]:
    """Writes a RunStarted: a new run, a resume that continues the recorded run (its rows after the checkpoint
    dropped), or a branch of it (the shared steps copied). `label`: the comparison's; `owner`: the recording
    process's (pid, pid start time, host). Returns (run id, last event seq, the run's started_at)."""
    pid, pid_started_at, host = owner
    config = dict(event.config)
    started = dataclasses.asdict(event)
    existing = _run_of(db, event.run_uid)
    uid, parent = event.run_uid or os.urandom(16).hex(), None
    if existing is not None and not _continues(db, existing, event.start_step):
        # the run goes on elsewhere, or went on past this checkpoint: a branch of its own, never a rewrite
        parent, uid = existing, f"{event.run_uid}-{os.urandom(4).hex()}"
    elif existing is None and event.branch_of:  # the session made it a branch already (its own checkpoints)
        parent = _run_of(db, event.branch_of)
    if parent is not None:
        label = f"resumed from #{parent[0]} at step {event.start_step}"
    if existing is not None and parent is None:  # a resume: the same run continues from its checkpoint
        run_id = int(existing[0])
        for table in ("steps", "reports", "rank_reports", "events"):
            db.execute(f"DELETE FROM {table} WHERE run_id = ? AND step > ?", (run_id, event.start_step))
        db.execute(
            "UPDATE runs SET status = 'running', finished_at = NULL, summary = NULL, message = '', "
            "message_json = NULL, "
            "heartbeat_at = ?, pid = ?, pid_started_at = ?, host = ?, steps = ?, total_steps = ?, "
            "config = ?, started = ?, world_size = ?, resumes = resumes + 1 WHERE id = ?",
            (
                at,
                pid,
                pid_started_at,
                host,
                event.start_step,
                event.total_steps,
                _json(config),
                _json(started),
                event.world_size,
                run_id,
            ),
        )
        seq = db.execute("SELECT coalesce(max(seq), 0) FROM events WHERE run_id = ?", (run_id,)).fetchone()[0]
        started_at = db.execute("SELECT started_at FROM runs WHERE id = ?", (run_id,)).fetchone()[0]
    else:
        cursor = db.execute(
            "INSERT INTO runs (uid, started_at, heartbeat_at, status, pid, pid_started_at, host, label, model, "
            "dataset, device, device_name, placement, batch_size, total_steps, steps, config, started, world_size, "
            "name) "
            "VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                uid,
                at,
                at,
                pid,
                pid_started_at,
                host,
                label,
                str(config.get("model", "")),
                str(config.get("dataset", "")),
                event.device,
                event.device_name,
                event.placement,
                int(config.get("batch_size", 0)),
                event.total_steps,
                event.start_step,
                _json(config),
                _json(started),
                event.world_size,
                event.name,
            ),
        )
        run_id = int(cursor.lastrowid)
        seq = 0
        started_at = at
        if parent is not None:  # a branch starts with the steps it shares with the run it left
            _copy_until(db, int(parent[0]), run_id, event.start_step)
            seq = db.execute("SELECT coalesce(max(seq), 0) FROM events WHERE run_id = ?", (run_id,)).fetchone()[0]
    return run_id, seq, started_at


def write_steps(db: sqlite3.Connection, at: float, event: StepsReported, run_id: int, started_at: float) -> None:
    """Writes a report: its steps' losses, the report row, every rank's row (data-parallel) and the run's totals."""
    m = event.memory
    db.executemany(
        "INSERT OR REPLACE INTO steps (run_id, step, epoch, loss) VALUES (?, ?, ?, ?)",
        [(run_id, event.first_step + i, event.epoch, _nan_as_null(loss)) for i, loss in enumerate(event.losses)],
    )
    _insert(
        db,
        "reports",
        [
            {
                "run_id": run_id,
                "step": event.step,
                "at": at,
                "elapsed_s": at - started_at,
                "samples": event.samples,
                "samples_per_s": event.samples_per_s,
                "batch_size": event.batch_size,
                "total_steps": event.total_steps,
                "eta_s": event.eta_s,
                **m.byte_counts(),
                **phase_values(event.phases),
            }
        ],
    )
    if event.ranks:  # a data-parallel run: every rank's own sample, in this report's transaction
        _insert(
            db,
            "rank_reports",
            [
                {
                    "run_id": run_id,
                    "step": event.step,
                    "rank": r.rank,
                    "device": r.device,
                    "samples_per_s": _nan_as_null(r.samples_per_s),
                    **r.memory.byte_counts(),
                }
                for r in event.ranks
            ],
        )
    finite = [loss for loss in event.losses if math.isfinite(loss)]  # the latest step's loss, as the summary's last
    samples = [m, *(r.memory for r in event.ranks)]  # a run's peak is its fullest device's
    db.execute(
        "UPDATE runs SET steps = ?, total_steps = ?, batch_size = ?, samples_per_s = ?, "
        "loss_last = coalesce(?, loss_last), peak_allocated_bytes = max(peak_allocated_bytes, ?), "
        "peak_reserved_bytes = max(peak_reserved_bytes, ?) WHERE id = ?",
        (
            event.step,
            event.total_steps,
            event.batch_size,
            event.samples_per_s,
            finite[-1] if finite else None,
            max(s.peak_allocated_bytes for s in samples),
            max(s.peak_reserved_bytes for s in samples),
            run_id,
        ),
    )


def finish_run(db: sqlite3.Connection, at: float, event: RunFinished, run_id: int) -> None:
    """Writes a RunFinished: the run's status, message and summary."""
    s = event.summary
    db.execute(
        "UPDATE runs SET status = ?, message = ?, message_json = ?, finished_at = ?, steps = ?, "
        "samples_per_s = ?, loss_last = CASE WHEN ? THEN NULL ELSE coalesce(?, loss_last) END, val_accuracy = ?, "
        "peak_allocated_bytes = max(peak_allocated_bytes, ?), "
        "peak_reserved_bytes = max(peak_reserved_bytes, ?), batch_size = coalesce(?, batch_size), summary = ? "
        "WHERE id = ?",
        (
            event.status,
            event.message,
            message_json(event.message),
            at,
            event.step,
            s.samples_per_s,
            s.loss_last is not None and math.isnan(s.loss_last),  # ended in nan: no finite loss from before it
            _nan_as_null(s.loss_last),
            s.val_accuracy,
            s.peak_allocated_bytes,
            s.peak_reserved_bytes,
            s.batch_size or None,
            _json(s.to_dict()),
            run_id,
        ),
    )


def insert_event(db: sqlite3.Connection, at: float, event: Any, run_id: int, seq: int) -> None:
    """Writes any other event (a dataclass) as the run's event number `seq`: its kind and `event_data`."""
    step = getattr(event, "step", None)
    db.execute(
        "INSERT INTO events (run_id, seq, at, step, kind, data) VALUES (?, ?, ?, ?, ?, ?)",
        (run_id, seq, at, step, type(event).__name__, _json(event_data(event))),
    )


def _run_of(db: sqlite3.Connection, uid: str) -> tuple[Any, ...] | None:
    """The recorded run `uid` (id, status, pid, pid_started_at, host, heartbeat_at), or None."""
    if not uid:
        return None
    return db.execute(
        "SELECT id, status, pid, pid_started_at, host, heartbeat_at FROM runs WHERE uid = ?", (uid,)
    ).fetchone()


def _continues(db: sqlite3.Connection, existing: tuple[Any, ...], start_step: int) -> bool:
    """Whether a resume at `start_step` continues the recorded run itself: not while another process records
    it, and, unless it was interrupted (killed, then resumed), not when it already holds later steps."""
    run_id, status = existing[0], existing[1]
    if status == "running" and process_alive(*existing[2:]):
        return False
    if status in ("running", "interrupted"):
        return True
    later = db.execute("SELECT 1 FROM steps WHERE run_id = ? AND step > ? LIMIT 1", (run_id, start_step)).fetchone()
    return later is None


def _insert(db: sqlite3.Connection, table: str, rows: list[dict[str, Any]]) -> None:
    """INSERT OR REPLACE `rows` (dicts with the same keys, in the same order) into `table`, by column name."""
    names = list(rows[0])
    db.executemany(
        f"INSERT OR REPLACE INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
        [tuple(row.values()) for row in rows],
    )


def _copy_until(db: sqlite3.Connection, source: int, target: int, step: int) -> None:
    db.execute(
        "INSERT INTO steps SELECT ?, step, epoch, loss FROM steps WHERE run_id = ? AND step <= ?",
        (target, source, step),
    )
    columns = ", ".join(name for name in REPORT_COLUMNS)
    db.execute(
        f"INSERT INTO reports (run_id, {columns}) SELECT ?, {columns} FROM reports WHERE run_id = ? AND step <= ?",
        (target, source, step),
    )
    columns = ", ".join(RANK_REPORT_COLUMNS)
    db.execute(
        f"INSERT INTO rank_reports (run_id, {columns}) SELECT ?, {columns} FROM rank_reports "
        "WHERE run_id = ? AND step <= ?",
        (target, source, step),
    )
    db.execute(
        "INSERT INTO events SELECT ?, seq, at, step, kind, data FROM events WHERE run_id = ? AND "
        "(step IS NULL OR step <= ?)",
        (target, source, step),
    )


def event_data(event: Any) -> dict[str, Any]:
    """An event's fields as stored: each text for people (a `Message`) also as `<field>_message`, its
    template and values, so a window reading the run later shows it in its own language. The field itself
    stays the English text, which exports and `runs show` print."""
    data = dataclasses.asdict(event)
    for field in dataclasses.fields(event):
        value = getattr(event, field.name)
        if isinstance(value, Message):
            data[f"{field.name}_message"] = message_to_json(value)
    return data


def _nan_as_null(value: float | None) -> float | None:
    """NaN as None (SQL NULL, read back as NaN), so `coalesce` keeps the earlier value; inf is stored as it is
    (SQLite keeps it): a loss that became inf reads back as inf, not as a missing value."""
    return None if value is None or math.isnan(value) else value


def _json(value: Any) -> str:
    """JSON with NaN/inf as null, so any JSON reader (an export, another tool) accepts what is stored."""
    return json.dumps(strict_json(value), separators=(",", ":"))
