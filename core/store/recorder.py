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

from ..base.text import Message, message_of
from ..events.events import ContenderEvent, EpochStarted, Event, RunFinished, RunStarted, StepsReported
from .connection import store_problem
from .run_store import HEARTBEAT_S, RunStore, StoreError
from .run_writes import begin_run, finish_run, insert_event, write_steps
from .schema import transaction

_STOP = object()
Owner = tuple[int, float, str]  # a run's process: its pid, that process's create time, its host's name
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
            self._queue.put((time.time(), event, None))

    def record_at(self, event: Event, at: float, owner: Owner | None = None) -> None:
        """Record an event that happened elsewhere: at `at` (the time its own process stamped it) and, for a
        run's start, with `owner` (pid, its create time, host) as the process that trains it. A comparison run on
        another machine is recorded here so: its times and host are that machine's, as a mirrored run's are."""
        if self.problem is None:
            self._queue.put((at, event, owner))

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
                            for at, event, owner in pending:
                                self._write(db, at, event, owner)
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

    def _write(
        self, db: sqlite3.Connection, at: float, event: Any, owner: tuple[int, float, str] | None = None
    ) -> None:
        match event:
            case ContenderEvent():
                self._label = event.label
                self._write(db, at, event.event, owner)
            case RunStarted():
                owner = owner or (self._pid, self._pid_started_at, self._host)
                self._run_id, self._seq, self._started_at = begin_run(db, at, event, self._label, owner)
                self.run_ids.append(self._run_id)
            case StepsReported() if self._run_id is not None:
                write_steps(db, at, event, self._run_id, self._started_at)
            case RunFinished() if self._run_id is not None:
                finish_run(db, at, event, self._run_id)
                self._run_id = None
                self._label = ""
            case EpochStarted():
                pass  # EpochEnded says all a reader needs; the epoch of every step is in `steps`
            case _ if self._run_id is not None and dataclasses.is_dataclass(event):
                self._seq += 1
                insert_event(db, at, event, self._run_id, self._seq)


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
