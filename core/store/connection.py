"""Opening a run store's SQLite file, and the one sentence each way of failing at it becomes.

Its own module because getting a usable connection (refusing special files and other programs' databases,
WAL mode raced by other processes, a read-only opening that cannot migrate) and saying for people why it
failed is a job apart from what gpu_train_monitor.store.run_store reads and edits through that connection.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from ..base.text import Message, message_of
from .files import NotAFile, refuse_special_file, writable_sidecars
from .schema import SCHEMA_VERSION, NewerSchema, NotAStore, check_is_store, migrate, newer_schema, schema_version

BUSY_TIMEOUT_MS = 3000  # wait this long for another process's write before calling the store locked


def store_problem(path: Path | str, exc: BaseException) -> str:
    """One sentence for people: which store, what is wrong, what to do."""
    text = str(exc).lower()
    path, error = str(path), message_of(exc)
    if isinstance(exc, NotAFile):
        return error
    if isinstance(exc, NotAStore):
        return Message("{path} is not a run store: {error}; give --runs-db a new file name", path=path, error=error)
    if isinstance(exc, NewerSchema):
        return Message(
            "the run store {path} was written by a newer version of this app ({error}); use that version "
            "or another --runs-db",
            path=path,
            error=error,
        )
    if "locked" in text or "busy" in text:
        return Message(
            "the run store {path} is locked by another process (it stayed busy for {seconds:.0f} s)",
            path=path,
            seconds=BUSY_TIMEOUT_MS / 1000,
        )
    if "readonly" in text or "read-only" in text or isinstance(exc, PermissionError):
        for sidecar in (f"{path}-shm", f"{path}-wal"):  # left read-only by an older version of the app
            if os.access(path, os.W_OK) and os.path.exists(sidecar) and not os.access(sidecar, os.W_OK):
                return Message(
                    "the run store {path} is writable but its {sidecar} file is read-only; with the app "
                    "and every run closed, delete {sidecar}",
                    path=path,
                    sidecar=sidecar,
                )
        return Message("the run store {path} is read-only; choose a writable file with --runs-db", path=path)
    if "full" in text or getattr(exc, "errno", None) == 28:
        return Message("the disk holding the run store {path} is full", path=path)
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return Message(
            "the run store {path} is damaged ({error}); with the app closed, move it aside together with "
            "its -wal and -shm files and a new one is started",
            path=path,
            error=error,
        )
    if "unable to open" in text or isinstance(exc, OSError):
        return Message(
            "the run store {path} cannot be opened ({error}); check the folder exists and is writable",
            path=path,
            error=error,
        )
    return Message("the run store {path} failed: {error}", path=path, error=error)


def connect(path: Path, readonly: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL journal, foreign keys on."""
    refuse_special_file(path)
    writable_sidecars(path)  # left read-only by an earlier version: SQLite would open its -shm read-only
    if readonly:
        if not path.exists():
            raise sqlite3.OperationalError(Message("unable to open database file (it does not exist)"))
        db = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
            timeout=BUSY_TIMEOUT_MS / 1000,
        )
    else:
        if path.exists() and not os.access(path, os.W_OK):  # SQLite would open it read-only, fail at a write,
            raise PermissionError(Message("the file is read-only"))  # and leave a -shm as read-only as the file
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not readonly:
            check_is_store(db)  # before WAL mode, which would change another program's file for good
            _enable_wal(db)  # readers never block the writer, nor it them
            db.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: a killed process loses no committed report
        db.execute("PRAGMA foreign_keys = ON")
        if readonly:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # a damaged file fails here, not later
            check_is_store(db)
            found = schema_version(db)  # a reader cannot migrate: refuse a store not (yet) at this version
            if found > SCHEMA_VERSION:
                raise newer_schema(found)
            if found < SCHEMA_VERSION:
                raise sqlite3.OperationalError(
                    Message("it is still being created, or has an older schema that opening it for writing migrates")
                    if found
                    else Message("it is still being created (no tables yet)")
                )
        else:
            migrate(db)
    except BaseException:
        db.close()
        raise
    writable_sidecars(path)
    return db


def _enable_wal(db: sqlite3.Connection) -> None:
    """Switch to the WAL journal, waiting up to BUSY_TIMEOUT_MS for other connections: SQLite answers
    a switch that races another connection's (processes creating a new store together) with an immediate
    "database is locked", without calling the busy handler, so the wait is here."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
