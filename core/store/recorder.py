"""Records a session's events in the run store from a thread of its own, so training never waits on disk.

`RunRecorder` is an observer: called in the training thread, it only stamps the event with the time and
puts it on a queue. Its writer thread drains the queue and writes what it found in one transaction, which
in practice is one transaction per report (~10 a second), and touches the run's heartbeat every few
seconds while nothing arrives (a paused run). A process killed mid-run therefore loses at most the events
still queued: the last report interval. A comparison's runs are recorded one after another, each with its
label. A data-parallel run is one run, recorded by rank 0 alone: its reports hold the whole run's throughput
and rank 0's memory, `rank_reports` every rank's own sample (written in the same transaction), and its peak
memory is the fullest rank's. A write that fails (disk full, the file removed or locked for too long) stops
recording, tells `on_problem` once, and never touches the training.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import queue
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil

from core.base.outputs import strict_json
from core.base.text import Message, message_of, message_to_json
from core.run.events import ContenderEvent, EpochStarted, Event, RunFinished, RunStarted, StepsReported
from core.store.run_store import (
    HEARTBEAT_S,
    RANK_REPORT_COLUMNS,
    REPORT_COLUMNS,
    RunStore,
    StoreError,
    message_json,
    process_alive,
    store_problem,
)
from core.store.schema import transaction

_STOP = object()
PATIENCE_S = 120.0  # a store busy this long (beyond SQLite's own wait) stops recording: locked for good
RETRY_S = 0.5


def _busy(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc).lower() or "busy" in str(exc).lower())


@dataclasses.dataclass(frozen=True)
class _WriterMemo:
    """What the writer remembers of the store before a transaction: restored when the transaction rolls back."""

    run_id: int | None
    started_at: float
    seq: int
    label: str
    runs: int  # len(run_ids)


class RunRecorder:
    """Observer that writes every run it sees to the store at `path` (None: the default store)."""

    def __init__(
        self,
        path: Path | str | None = None,
        on_problem: Callable[[str], None] | None = None,
        patience_s: float = PATIENCE_S,
    ) -> None:
        """Opens the store now (StoreError if it cannot be used: the caller trains without recording).
        A store kept busy by another process is retried for `patience_s` before recording gives up."""
        self._store = RunStore(path)
        self.patience_s = patience_s
        self.path = self._store.path
        self.on_problem = on_problem
        self.problem: str | None = None
        self.run_ids: list[int] = []  # every run recorded, in order
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._pid = os.getpid()
        self._pid_started_at = psutil.Process(self._pid).create_time()
        self._host = socket.gethostname()
        self._run_id: int | None = None  # the run being written
        self._started_at = 0.0
        self._seq = 0
        self._label = ""
        self._written = threading.Event()  # set when the writer has stopped
        self._thread = threading.Thread(target=self._write_loop, name="run-store", daemon=True)
        self._thread.start()

    # ---- called from the training thread ---------------------------------------------------------
    def __call__(self, event: Event) -> None:
        if self.problem is None:
            self._queue.put((time.time(), event))

    def close(self, timeout_s: float = 10.0) -> None:
        """Write what is queued and stop the writer (bounded: a store locked for good cannot hang a caller)."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            # an Event, not join(): join() calls threading.current_thread(), which in a thread Python did not
            # start (a QThread) registers a _DummyThread that stays in threading's table for good
            self._written.wait(timeout_s)

    @property
    def run_id(self) -> int | None:
        """The store's id of the newest run recorded (None before its RunStarted has been written)."""
        return self.run_ids[-1] if self.run_ids else None

    # ---- the writer thread -----------------------------------------------------------------------
    def _write_loop(self) -> None:
        db = self._store.connection
        pending: list[Any] = []  # events not yet committed (kept across a busy store's retries)
        busy_since: float | None = None
        stop = False
        try:
            while True:
                try:
                    items = [self._queue.get(timeout=HEARTBEAT_S if busy_since is None else RETRY_S)]
                except queue.Empty:
                    items = []
                while not self._queue.empty():
                    items.append(self._queue.get())
                stop = stop or _STOP in items
                pending += [item for item in items if item is not _STOP]
                if self.problem is None and (pending or self._run_id is not None):
                    memo = self._memo()
                    try:
                        with transaction(db):
                            for at, event in pending:
                                self._write(db, at, event)
                            if self._run_id is not None:
                                db.execute("UPDATE runs SET heartbeat_at = ? WHERE id = ?", (time.time(), self._run_id))
                        pending, busy_since = [], None
                    except Exception as exc:  # noqa: BLE001 - whatever it is, recording stops, training never does
                        self._restore(memo)  # the transaction rolled back: so does what the writer remembered
                        now = time.monotonic()
                        if _busy(exc) and now - (busy_since or now) < self.patience_s:
                            busy_since = busy_since or now  # another process writes (a delete): try again soon
                        else:
                            self._fail(exc)
                if self.problem is not None:
                    pending = []
                if stop and not pending:
                    return
        finally:
            self._store.close()
            self._written.set()

    def _memo(self) -> _WriterMemo:
        return _WriterMemo(self._run_id, self._started_at, self._seq, self._label, len(self.run_ids))

    def _restore(self, memo: _WriterMemo) -> None:
        self._run_id, self._started_at, self._seq, self._label = memo.run_id, memo.started_at, memo.seq, memo.label
        del self.run_ids[memo.runs :]

    def _fail(self, exc: BaseException) -> None:
        self.problem = Message(
            "recording stopped: {problem}; the run goes on unrecorded", problem=store_problem(self.path, exc)
        )
        if self.on_problem is not None:
            self.on_problem(self.problem)

    def _write(self, db: sqlite3.Connection, at: float, event: Any) -> None:
        match event:
            case ContenderEvent():
                self._label = event.label
                self._write(db, at, event.event)
            case RunStarted():
                self._begin(db, at, event)
            case StepsReported() if self._run_id is not None:
                self._steps(db, at, event)
            case RunFinished() if self._run_id is not None:
                self._finish(db, at, event)
            case EpochStarted():
                pass  # EpochEnded says all a reader needs; the epoch of every step is in `steps`
            case _ if self._run_id is not None and dataclasses.is_dataclass(event):
                self._seq += 1
                step = getattr(event, "step", None)
                db.execute(
                    "INSERT INTO events (run_id, seq, at, step, kind, data) VALUES (?, ?, ?, ?, ?, ?)",
                    (self._run_id, self._seq, at, step, type(event).__name__, _json(event_data(event))),
                )

    def _begin(self, db: sqlite3.Connection, at: float, event: RunStarted) -> None:
        config = dict(event.config)
        started = dataclasses.asdict(event)
        existing = _run_of(db, event.run_uid)
        uid, label, parent = event.run_uid or os.urandom(16).hex(), self._label, None
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
                    self._pid,
                    self._pid_started_at,
                    self._host,
                    event.start_step,
                    event.total_steps,
                    _json(config),
                    _json(started),
                    event.world_size,
                    run_id,
                ),
            )
            self._seq = db.execute("SELECT coalesce(max(seq), 0) FROM events WHERE run_id = ?", (run_id,)).fetchone()[0]
            self._started_at = db.execute("SELECT started_at FROM runs WHERE id = ?", (run_id,)).fetchone()[0]
        else:
            cursor = db.execute(
                "INSERT INTO runs (uid, started_at, heartbeat_at, status, pid, pid_started_at, host, label, model, "
                "dataset, device, device_name, placement, batch_size, total_steps, steps, config, started, world_size) "
                "VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    uid,
                    at,
                    at,
                    self._pid,
                    self._pid_started_at,
                    self._host,
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
                ),
            )
            run_id = int(cursor.lastrowid)
            self._seq = 0
            self._started_at = at
            if parent is not None:  # a branch starts with the steps it shares with the run it left
                _copy_until(db, int(parent[0]), run_id, event.start_step)
                self._seq = db.execute(
                    "SELECT coalesce(max(seq), 0) FROM events WHERE run_id = ?", (run_id,)
                ).fetchone()[0]
        self._run_id = run_id
        self.run_ids.append(run_id)

    def _steps(self, db: sqlite3.Connection, at: float, event: StepsReported) -> None:
        run_id, m = self._run_id, event.memory
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
                    "elapsed_s": at - self._started_at,
                    "samples": event.samples,
                    "samples_per_s": event.samples_per_s,
                    "batch_size": event.batch_size,
                    "total_steps": event.total_steps,
                    "eta_s": event.eta_s,
                    **m.byte_counts(),
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
        finite = [loss for loss in event.losses if math.isfinite(loss)]
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
                sum(finite) / len(finite) if finite else None,
                max(s.peak_allocated_bytes for s in samples),
                max(s.peak_reserved_bytes for s in samples),
                run_id,
            ),
        )

    def _finish(self, db: sqlite3.Connection, at: float, event: RunFinished) -> None:
        s = event.summary
        db.execute(
            "UPDATE runs SET status = ?, message = ?, message_json = ?, finished_at = ?, steps = ?, "
            "samples_per_s = ?, loss_last = coalesce(?, loss_last), val_accuracy = ?, "
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
                _nan_as_null(s.loss_last),
                s.val_accuracy,
                s.peak_allocated_bytes,
                s.peak_reserved_bytes,
                s.batch_size or None,
                _json(s.to_dict()),
                self._run_id,
            ),
        )
        self._run_id = None
        self._label = ""


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


def open_recorder(
    path: Path | str | None, warn: Callable[[str], None], on_problem: Callable[[str], None] | None = None
) -> RunRecorder | None:
    """A recorder for the store at `path`, or None after telling `warn` why the run will not be recorded
    (the run trains either way)."""
    try:
        return RunRecorder(path, on_problem)
    except StoreError as exc:
        warn(Message("this run is not recorded: {problem}", problem=message_of(exc)))
        return None


@contextlib.contextmanager
def recording(
    observers: list[Any], path: Path | str | None, warn: Callable[[str], None]
) -> Iterator[RunRecorder | None]:
    """Record what `observers` hear into the store at `path` while the block runs, then close the recorder (its
    queue written out). The CLI and the window both record so: a store that cannot be used, or that stops
    working, is one `warn` and the run trains unrecorded. Yields the recorder, or None."""
    recorder = open_recorder(path, warn, on_problem=warn)
    if recorder is not None:
        observers.append(recorder)
    try:
        yield recorder
    finally:
        if recorder is not None:
            recorder.close()


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
