"""The laptop's copy of a remote run: the agent's chunks of rows written into the local run store.

A followed remote run becomes an ordinary run of the local store (the same uid, the remote's host, pid and
times as recorded there), so everything that reads the local store (the window following a run by uid, the
Runs tab, overlays, `runs show/export`) works on it, also after disconnecting. Rows are written with INSERT
OR REPLACE under the local run id, one chunk per transaction: a chunk sent twice (a backfill after a drop
overlaps what arrived) changes nothing. Where to resume after a drop is read back from what was written
(`cursor`), so a chunk lost with the connection is asked for again.

Only the columns the local store has are written (a newer agent's extra columns are left out), and values
are plain JSON values, so a chunk can never name SQL. Every value is checked against its column before anything
is written (an integer within SQLite's 64 bits, a number, a text, JSON where JSON is kept, nothing missing where
the column needs it, a status this app knows): a chunk with one bad value is refused whole, in one line, and the
local store stays as readable as it was.

A mirror writes only the run it follows, and only over its own copy: each copied run keeps the machine it came
from (`origin`, as the user named it), and a run recorded here (origin '') or copied from another machine is
never written over. A uid that is taken is refused in one line.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...base.errors import UserError
from ...base.text import Message
from ...events.status import Status
from ...store.connection import store_problem
from ...store.run_store import RunStore, StoreError
from ...store.schema import transaction

ROW_TABLES = ("steps", "reports", "rank_reports", "events")  # the tables a chunk carries rows of, besides runs
JSON_COLUMNS = {"config", "started", "summary", "message_json", "data"}  # text columns that hold JSON
INT64 = range(-(2**63), 2**63)  # what an INTEGER column holds
ORIGIN = "origin"  # the column saying where a copied run came from; never taken from the chunk


class MirrorError(UserError):
    """A chunk that cannot be written: not the agent's format (a run without its columns, rows that are not
    objects)."""


@dataclass(frozen=True)
class Column:
    """What a column of the local store takes (from SQLite's table_info)."""

    name: str
    kind: str  # INTEGER, REAL or TEXT
    required: bool  # NOT NULL without a default to fall back on


def mirror_chunk(
    store: RunStore, chunk: Mapping[str, Any], uid: str | None = None, *, origin: str, keep_id: bool = False
) -> int:
    """Write one chunk (`{"run": {...}, "steps": [...], "reports": [...], "rank_reports": [...], "events":
    [...]}`) of the run copied from `origin` into `store` in one transaction; returns the run's local id. The run
    row is inserted or updated by its uid; `uid`, when given, is the run being followed: a chunk of any other run
    is refused. `keep_id`: a new run takes the chunk's `id` (a temporary store that shows a remote run under the id
    the remote lists). MirrorError (one line, nothing written) for a chunk that is not the agent's format, a value
    its column cannot hold, or a uid this store holds already for another run."""
    run = chunk.get("run")
    if run is not None and not isinstance(run, Mapping):
        raise MirrorError(Message("the agent sent a run that is not an object"))
    sent_uid = run.get("uid") if run else None
    if sent_uid is not None and (not isinstance(sent_uid, str) or not sent_uid):
        raise MirrorError(Message("the agent sent a run whose uid is not a text"))
    if uid and sent_uid and sent_uid != uid:
        raise MirrorError(
            Message("the agent sent rows of run {sent} while run {uid} is followed", sent=sent_uid, uid=uid)
        )
    uid = sent_uid or uid
    if not uid:
        raise MirrorError(Message("the agent sent rows without the run they belong to"))
    db = store.connection
    try:
        columns = {table: _columns(db, table) for table in ("runs", *ROW_TABLES)}
        rows = {table: _checked_rows(chunk, table, columns[table]) for table in ROW_TABLES}
        run_values = _checked(columns["runs"], run or {}, "runs", drop=("id", ORIGIN))
        with transaction(db):
            run_id = _upsert_run(db, uid, run, run_values, columns["runs"], keep_id, origin)
            for table in ROW_TABLES:
                _replace_rows(db, table, run_id, rows[table], columns[table])
    except sqlite3.IntegrityError as exc:
        raise MirrorError(
            Message("the agent sent rows the local run store cannot hold ({error})", error=str(exc))
        ) from None
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(store_problem(store.path, exc)) from None
    return run_id


def cursor(store: RunStore, uid: str) -> tuple[int, int]:
    """(last step, last event seq) of run `uid` in `store`: a follow resumes after them; (0, 0) for a run not
    copied yet. The last step is the last one whose report arrived too (a report's steps and row are written
    together on the remote, so a chunk cut between them is asked for again)."""
    db = store.connection
    try:
        row = db.execute("SELECT id FROM runs WHERE uid = ?", (uid,)).fetchone()
        if row is None:
            return 0, 0
        run_id = row[0]
        step = db.execute("SELECT max(step) FROM steps WHERE run_id = ?", (run_id,)).fetchone()[0]
        report = db.execute("SELECT max(step) FROM reports WHERE run_id = ?", (run_id,)).fetchone()[0]
        seq = db.execute("SELECT max(seq) FROM events WHERE run_id = ?", (run_id,)).fetchone()[0]
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(store_problem(store.path, exc)) from None
    last_step = min(step or 0, report or 0)
    return int(last_step), int(seq or 0)


def _upsert_run(
    db: sqlite3.Connection,
    uid: str,
    run: Mapping[str, Any] | None,
    values: dict[str, Any],
    columns: dict[str, Column],
    keep_id: bool,
    origin: str,
) -> int:
    existing = db.execute(f"SELECT id, status, {ORIGIN} FROM runs WHERE uid = ?", (uid,)).fetchone()
    if existing is not None:
        run_id = int(existing[0])
        if existing[2] != origin:  # recorded here (''), or a copy of another machine's run: never written over
            raise MirrorError(_taken(uid, origin, run_id, existing[2]))
        if run is not None and "status" not in run and existing[1] == "interrupted":
            # marked here (its heartbeat looked stale: clocks apart, a long drop), yet the agent still sends
            # changes without a status: it runs there, as this copy said before the mark
            values = {"status": "running", "finished_at": None, "message": "", "message_json": None, **values}
        names = [name for name in values if name != "uid"]
        if names:
            db.execute(
                f"UPDATE runs SET {', '.join(f'{name} = ?' for name in names)} WHERE id = ?",
                (*(values[name] for name in names), run_id),
            )
        return run_id
    if run is None:
        raise MirrorError(Message("the agent sent rows of run {uid} before the run itself", uid=uid))
    missing = [name for name, column in columns.items() if column.required and name not in values and name != "uid"]
    if missing:
        raise MirrorError(
            Message("the agent sent run {uid} without its {columns}", uid=uid, columns=", ".join(missing))
        )
    values = {**values, "uid": uid, ORIGIN: origin}
    if keep_id and isinstance(run.get("id"), int) and not isinstance(run.get("id"), bool) and run["id"] in INT64:
        taken = db.execute("SELECT 1 FROM runs WHERE id = ?", (run["id"],)).fetchone()
        if taken is None:
            values = {"id": run["id"], **values}
    cursor_ = db.execute(
        f"INSERT INTO runs ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})", tuple(values.values())
    )
    return int(cursor_.lastrowid)


def _taken(uid: str, origin: str, run_id: int, holder: str) -> Message:
    if not holder:
        return Message(
            "run {uid} of {origin} was not copied: run {run_id} of this run store, recorded here, has that uid, and a "
            "copy never replaces it",
            uid=uid,
            origin=origin,
            run_id=run_id,
        )
    return Message(
        "run {uid} of {origin} was not copied: run {run_id} of this run store, copied from {holder}, has that uid, "
        "and a copy never replaces it",
        uid=uid,
        origin=origin,
        run_id=run_id,
        holder=holder,
    )


def _replace_rows(
    db: sqlite3.Connection, table: str, run_id: int, rows: list[dict[str, Any]], columns: dict[str, Column]
) -> None:
    """INSERT OR REPLACE the (checked) rows under `run_id`, those naming the same columns in one statement."""
    groups: dict[tuple[str, ...], list[tuple[Any, ...]]] = {}
    for row in rows:
        values = {"run_id": run_id, **row}
        groups.setdefault(tuple(values), []).append(tuple(values.values()))
    for names, batch in groups.items():
        db.executemany(
            f"INSERT OR REPLACE INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", batch
        )


def _checked_rows(chunk: Mapping[str, Any], table: str, columns: dict[str, Column]) -> list[dict[str, Any]]:
    rows = chunk.get(table) or []
    if not isinstance(rows, list) or not all(isinstance(row, Mapping) for row in rows):
        raise MirrorError(Message("the agent sent {table} that are not a list of rows", table=table))
    checked = []
    for row in rows:
        values = _checked(columns, row, table, drop=("run_id",))
        missing = [name for name, column in columns.items() if column.required and name not in values]
        if [name for name in missing if name != "run_id"]:  # the run's local id is the mirror's to fill in
            raise MirrorError(
                Message("the agent sent {table} without their {columns}", table=table, columns=", ".join(missing))
            )
        checked.append(values)
    return checked


def _checked(columns: dict[str, Column], row: Mapping[str, Any], table: str, drop: tuple[str, ...]) -> dict[str, Any]:
    """The row's values for the columns its table has (others dropped), each checked against its column and made
    a value SQLite takes; MirrorError naming the first that does not fit."""
    values = {}
    for name, value in row.items():
        column = columns.get(name)
        if column is None or name in drop:
            continue
        values[name] = _value(column, value, table)
    return values


def _columns(db: sqlite3.Connection, table: str) -> dict[str, Column]:
    found = db.execute('SELECT name, type, "notnull", dflt_value FROM pragma_table_info(?)', (table,)).fetchall()
    return {
        name: Column(name, kind.upper(), bool(notnull) and default is None) for name, kind, notnull, default in found
    }


def _value(column: Column, value: Any, table: str) -> Any:
    def refused() -> MirrorError:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        return MirrorError(
            Message(
                "the agent sent {value} for {table}.{column}, which holds {kind}",
                value=shown,
                table=table,
                column=column.name,
                kind={"INTEGER": Message("whole numbers"), "REAL": Message("numbers")}.get(
                    column.kind, Message("text")
                ),
            )
        )

    if value is None:
        if column.required:
            raise refused()
        return None
    if column.name in JSON_COLUMNS:
        if isinstance(value, str):  # kept as the remote wrote it, once it is known to read back as JSON
            try:
                parsed = json.loads(value)
            except ValueError:
                raise refused() from None
            if not isinstance(parsed, (dict, list)):
                raise refused()
            return value
        if not isinstance(value, (dict, list)):
            raise refused()
        return json.dumps(value, separators=(",", ":"), allow_nan=False)
    if isinstance(value, bool):
        value = int(value)
    if column.kind == "INTEGER":
        if not isinstance(value, int) or value not in INT64:
            raise refused()
    elif column.kind == "REAL":
        if not isinstance(value, (int, float)) or isinstance(value, float) and math.isnan(value):
            raise refused()
        try:
            value = float(value)
        except OverflowError:  # a whole number past what a float holds
            raise refused() from None
    elif not isinstance(value, str):
        raise refused()
    elif column.name == "status" and table == "runs" and Status.of(value) is None:
        raise refused()
    return value
