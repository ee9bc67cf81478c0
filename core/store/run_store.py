"""The run store: every run's config, losses, memory and events in one SQLite file, kept after the app closes.

One file (WAL mode, so the window reads while a training process writes) in a folder of its own in the
user's data folder unless `--runs-db PATH` or the GPU_TRAIN_MONITOR_RUNS_DB environment variable names
another (gpu_train_monitor.store.files: where it lives, which paths can be one). `RunRecorder`
(gpu_train_monitor.store.recorder) writes it; this module opens it (gpu_train_monitor.store.connection: the SQLite side,
migrating included), reads runs back and edits what people may change afterwards (name, note, delete); what it reads
back are gpu_train_monitor.store.rows' frozen rows (importable from here too). Every SQLite failure becomes a
`StoreError` whose message says what is wrong with which file: a locked, read-only, damaged or full store never crashes
a caller.

A run still marked `running` whose process is gone (killed, crashed, the machine rebooted) is marked
`interrupted` whenever the store is opened for writing: its steps up to the last report are kept.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import psutil

from ..base.errors import UserError
from ..base.text import Message, message_from_json, message_to_json
from ..config.sequences import IMAGES, Throughput, throughput
from ..events.status import Status
from .connection import connect, store_problem
from .files import NotAFile, default_store_path
from .rows import EventRow, RankReportRow, ReportRow, RunRow, StepSeries
from .schema import NewerSchema, NotAStore, transaction
from .search import run_matches

STALE_AFTER_S = 60.0  # a run on another host whose heartbeat is older than this has stopped
HEARTBEAT_S = 2.0  # how often a recording process touches its running run, even when paused
STALE_ON_HOST_S = (
    5 * HEARTBEAT_S
)  # on this host, a live pid with a younger heartbeat is the recorder; older: its start time decides
FINISHED = tuple(status for status in Status if status.finished)  # every status but running
INTERRUPTED = Message(
    "the process recording it ended without finishing it (killed or crashed); steps up to its last report are kept"
)  # the message of a run found `interrupted`


class StoreError(UserError):
    """The run store cannot be opened, read or written; the message names the file and the cause."""


class RunNotFound(UserError):
    """No run with that id in the store."""


DERIVED = ("live", "throughput_unit", "tokens_per_sample")  # RunRow's fields worked out on reading, not columns
_RUN_COLUMNS = [f.name for f in fields(RunRow) if f.name not in DERIVED]
REPORT_COLUMNS = [f.name for f in fields(ReportRow)]
RANK_REPORT_COLUMNS = [f.name for f in fields(RankReportRow)]
SORTABLE = (
    "started_at",
    "status",
    "model",
    "dataset",
    "device",
    "samples_per_s",
    "loss_last",
    "peak_allocated_bytes",
    "steps",
    "name",
)


class RunStore:
    """A connection to the store, for one thread (SQLite connections are not shared between threads)."""

    def __init__(self, path: Path | str | None = None, *, readonly: bool = False) -> None:
        """Open (creating and migrating unless `readonly`) and mark dead runs interrupted; StoreError on failure."""
        self.path = Path(path).expanduser() if path is not None else default_store_path()
        self.readonly = readonly
        try:
            self._db = connect(self.path, readonly)
        except (sqlite3.Error, OSError, NewerSchema, NotAStore, NotAFile) as exc:
            raise StoreError(store_problem(self.path, exc)) from None
        if not readonly:
            with self._errors():
                self.mark_interrupted()

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connection(self) -> sqlite3.Connection:
        return self._db

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(store_problem(self.path, exc)) from None

    # ---- liveness --------------------------------------------------------------------------------
    def mark_interrupted(self) -> int:
        """Runs marked running whose process is gone become `interrupted`; returns how many. A store this
        process may not write is left as it is (whether a run is live is worked out afresh on every read)."""
        rows = self._db.execute(
            "SELECT id, pid, pid_started_at, host, heartbeat_at, origin FROM runs WHERE status = 'running'"
        ).fetchall()
        dead = [(row[0], row[1], row[2]) for row in rows if not process_alive(*row[1:5], copied=bool(row[5]))]
        if not dead:
            return 0
        try:
            with transaction(self._db):
                self._db.executemany(  # the same process still: a resume may have taken the row over meanwhile
                    "UPDATE runs SET status = 'interrupted', finished_at = heartbeat_at, message = ?, message_json = ? "
                    "WHERE id = ? AND status = 'running' AND pid = ? AND pid_started_at = ?",
                    [(INTERRUPTED, message_json(INTERRUPTED), *row) for row in dead],
                )
        except sqlite3.OperationalError as exc:
            if "readonly" in str(exc).lower() or "read-only" in str(exc).lower():
                return 0
            raise
        return len(dead)

    # ---- reading ---------------------------------------------------------------------------------
    def list_runs(self, search: str = "", order: str = "started_at", descending: bool = True) -> list[RunRow]:
        """Every run, newest first by default; only those matching `search` (gpu_train_monitor.store.search's rule, the
        window's too: every word in one of name, note, model, dataset, device, status, label, '#id' or the machine)."""
        if order not in SORTABLE:
            raise ValueError(f"cannot sort by {order}")
        direction = "DESC" if descending else "ASC"
        with self._errors():
            rows = self._db.execute(
                f"SELECT {', '.join(_RUN_COLUMNS)}, message_json, pid_started_at, config FROM runs "
                f"ORDER BY {order} {direction}, id {direction}"
            ).fetchall()
        return [run for run in map(_run_row, rows) if run_matches(run, search)]

    def run(self, run_id: int) -> RunRow:
        with self._errors():
            row = self._db.execute(
                f"SELECT {', '.join(_RUN_COLUMNS)}, message_json, pid_started_at, config FROM runs WHERE id = ?",
                (run_id,),
            ).fetchone()
        if row is None:
            raise RunNotFound(Message("no run {run_id} in {path}", run_id=run_id, path=str(self.path)))
        return _run_row(row)

    def find_uid(self, uid: str) -> int | None:
        with self._errors():
            row = self._db.execute("SELECT id FROM runs WHERE uid = ?", (uid,)).fetchone()
        return None if row is None else int(row[0])

    def config(self, run_id: int) -> dict[str, Any]:
        return json.loads(self._column(run_id, "config"))

    def started(self, run_id: int) -> dict[str, Any]:
        return json.loads(self._column(run_id, "started"))

    def summary(self, run_id: int) -> dict[str, Any] | None:
        value = self._column(run_id, "summary")
        return None if value is None else json.loads(value)

    def steps(self, run_id: int, after_step: int = 0) -> StepSeries:
        with self._errors():
            rows = self._db.execute(
                "SELECT step, epoch, loss FROM steps WHERE run_id = ? AND step > ? ORDER BY step", (run_id, after_step)
            ).fetchall()
        return StepSeries(
            tuple(r[0] for r in rows),
            tuple(r[1] for r in rows),
            tuple(math.nan if r[2] is None else r[2] for r in rows),
        )

    def reports(self, run_id: int, after_step: int = 0) -> list[ReportRow]:
        with self._errors():
            rows = self._db.execute(
                f"SELECT {', '.join(REPORT_COLUMNS)} FROM reports WHERE run_id = ? AND step > ? ORDER BY step",
                (run_id, after_step),
            ).fetchall()
        return [ReportRow(*row) for row in rows]

    def rank_reports(self, run_id: int, after_step: int = 0) -> list[RankReportRow]:
        """A data-parallel run's per-rank samples after `after_step`, by step then rank ([] for an ordinary
        run); a window following a live run polls with the last step it has."""
        with self._errors():
            rows = self._db.execute(
                f"SELECT {', '.join(RANK_REPORT_COLUMNS)} FROM rank_reports WHERE run_id = ? "
                "AND step > ? ORDER BY step, rank",
                (run_id, after_step),
            ).fetchall()
        return [RankReportRow(*row) for row in rows]

    def events(self, run_id: int, after_seq: int = 0, kinds: tuple[str, ...] = ()) -> list[EventRow]:
        where = f" AND kind IN ({', '.join('?' * len(kinds))})" if kinds else ""
        with self._errors():
            rows = self._db.execute(
                f"SELECT seq, at, step, kind, data FROM events WHERE run_id = ? AND seq > ?{where} ORDER BY seq",
                (run_id, after_seq, *kinds),
            ).fetchall()
        return [EventRow(seq, at, step, kind, json.loads(data)) for seq, at, step, kind, data in rows]

    def _column(self, run_id: int, column: str) -> Any:
        with self._errors():
            row = self._db.execute(f"SELECT {column} FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise RunNotFound(Message("no run {run_id} in {path}", run_id=run_id, path=str(self.path)))
        return row[0]

    # ---- what people change afterwards -----------------------------------------------------------
    def rename(self, run_id: int, name: str) -> None:
        self._update(run_id, "name", name.strip())

    def annotate(self, run_id: int, note: str) -> None:
        self._update(run_id, "note", note.strip())

    def delete(self, run_id: int) -> None:
        """Delete a run and everything recorded for it (its steps, reports, rank reports and events cascade)."""
        self.run(run_id)  # RunNotFound first
        with self._errors(), transaction(self._db):
            self._db.execute("DELETE FROM runs WHERE id = ?", (run_id,))

    def record_failure(self, uid: str, message: str) -> None:
        """A data-parallel run's launcher saw a rank fail: the run ends `failed` with that rank named, whatever
        rank 0 recorded (the lost connection it saw, or nothing when it was the one killed)."""
        with self._errors(), transaction(self._db):
            row = self._db.execute("SELECT summary FROM runs WHERE uid = ?", (uid,)).fetchone()
            if row is None:
                return  # rank 0 never got as far as recording it
            summary = None if row[0] is None else json.dumps({**json.loads(row[0]), "status": "failed"})
            self._db.execute(
                "UPDATE runs SET status = 'failed', message = ?, message_json = ?, summary = ?, "
                "finished_at = COALESCE(finished_at, ?) WHERE uid = ?",
                (message, message_json(message), summary, time.time(), uid),
            )

    def _update(self, run_id: int, column: str, value: str) -> None:
        self.run(run_id)
        with self._errors(), transaction(self._db):
            self._db.execute(f"UPDATE runs SET {column} = ? WHERE id = ?", (value, run_id))


def process_alive(pid: int, pid_started_at: float, host: str, heartbeat_at: float, *, copied: bool = False) -> bool:
    """Whether the process recording a run still runs. On this host a pid that is gone, or a zombie (killed,
    not yet reaped), is dead at once. A pid that exists is the recorder while its heartbeat (touched every
    HEARTBEAT_S) is recent; once that is stale, only if the start time matches (a reused pid is another
    process). The heartbeat comes first because psutil derives start times from the boot time, which moves
    when the wall clock is stepped. A run recorded on another host is alive while its heartbeat is recent, and so
    is a run `copied` from another machine (a mirror's copy), whatever its host is called: its pid is a process
    there, never one here (two machines may share a name)."""
    if copied or host != socket.gethostname():
        return time.time() - heartbeat_at < STALE_AFTER_S
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        if time.time() - heartbeat_at < STALE_ON_HOST_S:
            return True
        return abs(process.create_time() - pid_started_at) < 1.0
    except psutil.AccessDenied:  # it exists but is another user's: do not call it dead
        return True
    except (psutil.NoSuchProcess, ValueError):
        return False


def message_json(message: str) -> str | None:
    """The `runs.message_json` of `message`: its template and values, or NULL for plain text."""
    return json.dumps(message_to_json(message)) if isinstance(message, Message) else None


def _message(english: str, stored: str | None) -> str:
    """The run's message as a `Message` again when its template was stored and still renders the English."""
    if not stored:
        return english
    try:
        rebuilt = message_from_json(json.loads(stored))
    except ValueError:  # damaged by hand
        return english
    return rebuilt if isinstance(rebuilt, Message) and rebuilt == english else english


def _run_row(row: tuple[Any, ...]) -> RunRow:
    values = dict(zip(_RUN_COLUMNS, row[:-3]))
    message_stored, pid_started_at, config = row[-3:]
    values["message"] = _message(values["message"], message_stored)
    live = values["status"] == "running" and process_alive(
        values["pid"], pid_started_at, values["host"], values["heartbeat_at"], copied=bool(values.get("origin"))
    )
    unit = _throughput(config)
    return RunRow(live=live, throughput_unit=unit.unit, tokens_per_sample=unit.per_sample, **values)


def _throughput(config: str | None) -> Throughput:
    """How the run's throughput reads, from its config's JSON (images/s when it cannot be read)."""
    try:
        values = json.loads(config or "{}")
    except ValueError:  # damaged by hand
        return IMAGES
    return throughput(values) if isinstance(values, dict) else IMAGES
