"""The run store's tables, its schema version, and the migrations that bring an older store up to date.

The version lives in SQLite's `user_version` header field. Each migration is applied once, in order, in
one transaction with the version bump, so a store is always at a version whose tables it really has. A
store made by a newer version of the app is refused rather than guessed at.

A store is marked as ours by `APPLICATION_ID` in the header's `application_id` field, written with its
first tables. Any other SQLite file is refused before anything is written to it (no tables, no version, no
WAL switch): only a new or empty file becomes a store. Stores made before the mark existed (versions 1-4)
are recognised by having exactly the tables, columns and indexes that our migrations give that version,
and are marked when next opened for writing.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
from collections.abc import Iterator

from ..base.text import Message
from ..events.events import SAMPLE_COLUMNS, UNKNOWN_SAMPLE_COLUMNS

# A memory sample's byte counts as `reports` and `rank_reports` declare them (NULL only where a sample may not
# know the value). Migrations are history: a field added to MemorySample needs a migration of its own that adds
# its column, and the scripts below must keep creating the columns they always did (tests/core/store pins them).
_SAMPLE_COLUMNS_DDL = ",\n".join(
    f"    {name} INTEGER{'' if name in UNKNOWN_SAMPLE_COLUMNS else ' NOT NULL'}" for name in SAMPLE_COLUMNS
)

# Version 1: runs, their per-step losses, per-report throughput and memory, and every other event.
_V1 = f"""
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uid TEXT NOT NULL UNIQUE,            -- the session's run_uid: a resumed run continues the same row
    started_at REAL NOT NULL,            -- Unix time
    heartbeat_at REAL NOT NULL,          -- the writer touches it at least every few seconds while running
    finished_at REAL,
    status TEXT NOT NULL,                -- running | completed | stopped | diverged | oom | failed | interrupted
    message TEXT NOT NULL DEFAULT '',
    pid INTEGER NOT NULL,
    pid_started_at REAL NOT NULL,        -- the process's start time: a reused pid is not the same process
    host TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',      -- a comparison's label for this run (e.g. "placement=resident")
    model TEXT NOT NULL,
    dataset TEXT NOT NULL,
    device TEXT NOT NULL,
    device_name TEXT NOT NULL,
    placement TEXT NOT NULL,
    batch_size INTEGER NOT NULL,
    total_steps INTEGER NOT NULL,
    steps INTEGER NOT NULL DEFAULT 0,
    samples_per_s REAL,
    loss_last REAL,
    val_accuracy REAL,
    peak_allocated_bytes INTEGER NOT NULL DEFAULT 0,
    peak_reserved_bytes INTEGER NOT NULL DEFAULT 0,
    config TEXT NOT NULL,                -- JSON: the config as run
    started TEXT NOT NULL,               -- JSON: the RunStarted event
    summary TEXT                         -- JSON: the RunSummary, once finished
);
CREATE TABLE steps (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step INTEGER NOT NULL,
    epoch INTEGER NOT NULL,
    loss REAL,                           -- NULL for NaN (SQLite stores no NaN); inf is kept
    PRIMARY KEY (run_id, step)
) WITHOUT ROWID;
CREATE TABLE reports (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step INTEGER NOT NULL,
    at REAL NOT NULL,                    -- Unix time
    elapsed_s REAL NOT NULL,
    samples INTEGER NOT NULL,
    samples_per_s REAL NOT NULL,
    batch_size INTEGER NOT NULL,
    total_steps INTEGER NOT NULL,
    eta_s REAL,
{_SAMPLE_COLUMNS_DDL},
    PRIMARY KEY (run_id, step)
) WITHOUT ROWID;
CREATE TABLE events (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    at REAL NOT NULL,                    -- Unix time
    step INTEGER,
    kind TEXT NOT NULL,                  -- the event's class name: EpochEnded, CacheCleared, OutOfMemory, ...
    data TEXT NOT NULL,                  -- JSON of the event's fields
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
"""

# Version 2: what people add to a run afterwards (a name, a note), how often it was resumed, and an index
# for the history's default order.
_V2 = """
ALTER TABLE runs ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN resumes INTEGER NOT NULL DEFAULT 0;
CREATE INDEX runs_by_start ON runs (started_at);
"""

# Version 3: data-parallel runs. How many processes trained together (1: an ordinary run), and every rank's
# own throughput and memory at each report (the `reports` row of that step holds the whole run's throughput
# and rank 0's memory). Written in the report's transaction, so a rank row never lacks its report.
_V3 = f"""
ALTER TABLE runs ADD COLUMN world_size INTEGER NOT NULL DEFAULT 1;
CREATE TABLE rank_reports (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step INTEGER NOT NULL,               -- the report's step (reports.step)
    rank INTEGER NOT NULL,               -- global rank, 0..world_size-1
    device TEXT NOT NULL,                -- this rank's device ("cuda:1", "cpu")
    samples_per_s REAL,                  -- this rank's images/s over the report's steps; NULL if not a number
{_SAMPLE_COLUMNS_DDL},
    PRIMARY KEY (run_id, step, rank)
) WITHOUT ROWID;
"""

# Version 4: the run's message (why it ended) also as its template and values (gpu_train_monitor.base.text), so a
# window reads it in its own language; NULL when the message was plain text.
_V4 = """
ALTER TABLE runs ADD COLUMN message_json TEXT;
"""

# Version 5: where a run was copied from: '' for a run recorded here, else the machine a mirror copied it from, as
# the user named it (an ssh alias, user@host or user@host:port). A mirror writes only over its own copy of a run.
_V5 = """
ALTER TABLE runs ADD COLUMN origin TEXT NOT NULL DEFAULT '';
"""

# Version 6: where each report's steps spent their time (StepsReported.phases, gpu_train_monitor.engine.step_phases):
# each phase's median per step over the report's steps, on the host's clock, and the median step's whole time (one
# step's start to the next's), in whole microseconds: exact integers that a follow stream sends as small differences
# (17-digit seconds would break its 5 kB a second). NULL where the steps were not timed (a watched run's, a report
# recorded before this version). Named here, not derived from STEP_PHASES: a phase added later needs a migration.
_V6 = """
ALTER TABLE reports ADD COLUMN data_us INTEGER;
ALTER TABLE reports ADD COLUMN copy_us INTEGER;
ALTER TABLE reports ADD COLUMN forward_us INTEGER;
ALTER TABLE reports ADD COLUMN backward_us INTEGER;
ALTER TABLE reports ADD COLUMN optimizer_us INTEGER;
ALTER TABLE reports ADD COLUMN recording_us INTEGER;
ALTER TABLE reports ADD COLUMN step_us INTEGER;
"""

MIGRATIONS: tuple[str, ...] = (_V1, _V2, _V3, _V4, _V5, _V6)  # MIGRATIONS[i] takes a store from version i to i + 1
SCHEMA_VERSION = len(MIGRATIONS)
APPLICATION_ID = 0x47544D52  # "GTMR" in SQLite's header: this file is a GPU Training Monitor run store


class NewerSchema(Exception):
    """The store was written by a newer version of the app."""


def schema_version(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA user_version").fetchone()[0])


def application_id(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA application_id").fetchone()[0])


def migrate(connection: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Bring the store to `target` (default: the current version); returns the version it had before.
    Each step re-reads the version inside its write transaction: processes opening a new store together
    (a sweep script) apply each migration once, whoever comes first. A file that is not our store is
    refused, never changed (`check_is_store`); a store made before `APPLICATION_ID` existed is marked."""
    found = schema_version(connection)
    if found > SCHEMA_VERSION:
        raise newer_schema(found)
    for version in range(found, target):
        with transaction(connection):  # the tables, the version bump and the mark land together or not at all
            if _checked_version(connection) > version:
                continue  # another process applied it meanwhile
            for statement in _statements(MIGRATIONS[version]):
                connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {version + 1}")
            connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    if application_id(connection) != APPLICATION_ID and schema_version(connection):
        with transaction(connection):  # a store made before the mark existed, still recognised inside this write
            _checked_version(connection)
            connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    return found


def newer_schema(found: int) -> NewerSchema:
    """A store at schema version `found`, above this app's."""
    return NewerSchema(
        Message("its schema version is {found}, this app knows up to {known}", found=found, known=SCHEMA_VERSION)
    )


class NotAStore(Exception):
    """The file is an SQLite database of another program."""


def check_is_store(connection: sqlite3.Connection) -> None:
    """NotAStore for any database that is neither our store nor empty, read in one snapshot so that a store
    another process is creating right now (tables, version and mark commit together) is never mistaken.
    Reads only: call it before anything that writes (WAL mode changes another program's file for good)."""
    connection.execute("BEGIN")
    try:
        _checked_version(connection)
    finally:
        connection.execute("COMMIT")


def _checked_version(connection: sqlite3.Connection) -> int:
    """The version of our store, read with its mark and tables in one transaction (the caller's); NotAStore
    for another program's file. Unmarked, a file is ours only when empty (a new store) or when it has
    exactly the tables, columns and indexes our migrations give its version (a store older than the mark):
    a version number and a table named `runs` alone are common in other programs' databases."""
    found, mark = schema_version(connection), application_id(connection)
    if mark == APPLICATION_ID:
        if found > SCHEMA_VERSION:
            raise newer_schema(found)
        return found
    if mark == 0:
        objects = _objects(connection)
        if found == 0 and not objects:
            return 0
        if 1 <= found <= SCHEMA_VERSION and objects == _objects_at(found):
            return found
    raise NotAStore(
        Message("it is an SQLite database of another program (it is neither empty nor marked as a run store)")
    )


def _objects(connection: sqlite3.Connection) -> frozenset[tuple[str, str, str, tuple[str, ...]]]:
    """The database's tables, indexes, views and triggers with their columns (SQLite's own left out)."""
    rows = connection.execute(
        "SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite!_%' ESCAPE '!'"
    ).fetchall()
    found = set()
    for kind, name, table in rows:
        columns = (
            [] if kind != "table" else connection.execute("SELECT name FROM pragma_table_info(?)", (name,)).fetchall()
        )
        found.add((kind, name, table, tuple(column for (column,) in columns)))
    return frozenset(found)


@functools.cache
def _objects_at(version: int) -> frozenset[tuple[str, str, str, tuple[str, ...]]]:
    """What our migrations create up to `version`, built in memory."""
    connection = sqlite3.connect(":memory:")
    try:
        for script in MIGRATIONS[:version]:
            for statement in _statements(script):
                connection.execute(statement)
        return _objects(connection)
    finally:
        connection.close()


@contextlib.contextmanager
def transaction(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error (connections run in autocommit mode,
    isolation_level=None, so that transactions are exactly these)."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
    except BaseException:
        with contextlib.suppress(sqlite3.Error):  # a broken connection has nothing left to roll back
            connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _statements(script: str) -> list[str]:
    """The script's statements (executescript would commit the open transaction first)."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [part.strip() for part in "\n".join(lines).split(";") if part.strip()]
