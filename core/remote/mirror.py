"""The laptop's copy of a remote run: the agent's chunks of rows written into the local run store.

A followed remote run becomes an ordinary run of the local store (the same uid, the remote's host, pid and
times as recorded there), so everything that reads the local store (the window following a run by uid, the
Runs tab, overlays, `runs show/export`) works on it, also after disconnecting. Rows are written with INSERT
OR REPLACE under the local run id, one chunk per transaction: a chunk sent twice (a backfill after a drop
overlaps what arrived) changes nothing. Where to resume after a drop is read back from what was written
(`cursor`), so a chunk lost with the connection is asked for again.

Only the columns the local store has are written (a newer agent's extra columns are left out), and values
are plain JSON values, so a chunk can never name SQL.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from ..base.errors import UserError
from ..base.text import Message
from ..store.connection import store_problem
from ..store.run_store import RunStore, StoreError
from ..store.schema import transaction

ROW_TABLES = ("steps", "reports", "rank_reports", "events")  # the tables a chunk carries rows of, besides runs
JSON_COLUMNS = {"config", "started", "summary", "message_json", "data"}  # text columns that hold JSON


class MirrorError(UserError):
    """A chunk that cannot be written: not the agent's format (a run without its columns, rows that are not
    objects)."""


def mirror_chunk(store: RunStore, chunk: Mapping[str, Any], uid: str | None = None, *, keep_id: bool = False) -> int:
    """Write one chunk (`{"run": {...}, "steps": [...], "reports": [...], "rank_reports": [...], "events":
    [...]}`) into `store` in one transaction; returns the run's local id. The run row is inserted or updated
    by its uid (`uid` names it when the chunk has no run row). `keep_id`: a new run takes the chunk's `id`
    (a temporary store that shows a remote run under the id the remote lists)."""
    run = chunk.get("run")
    if run is not None and not isinstance(run, Mapping):
        raise MirrorError(Message("the agent sent a run that is not an object"))
    uid = str(run.get("uid")) if run and run.get("uid") else uid
    if not uid:
        raise MirrorError(Message("the agent sent rows without the run they belong to"))
    db = store.connection
    try:
        columns = {table: _columns(db, table) for table in ("runs", *ROW_TABLES)}
        with transaction(db):
            run_id = _upsert_run(db, uid, run, keep_id, columns["runs"])
            for table in ROW_TABLES:
                rows = chunk.get(table) or []
                if not isinstance(rows, list) or not all(isinstance(row, Mapping) for row in rows):
                    raise MirrorError(Message("the agent sent {table} that are not a list of rows", table=table))
                _replace_rows(db, table, run_id, rows, columns[table])
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
    db: sqlite3.Connection, uid: str, run: Mapping[str, Any] | None, keep_id: bool, columns: frozenset[str]
) -> int:
    existing = db.execute("SELECT id, status FROM runs WHERE uid = ?", (uid,)).fetchone()
    values = _known(columns, run or {}, drop=("id",))
    values["uid"] = uid
    if existing is not None:
        run_id = int(existing[0])
        if run is not None and "status" not in run and existing[1] == "interrupted":
            # marked here (its heartbeat looked stale: clocks apart, a long drop), yet the agent still sends
            # changes without a status: it runs there, as this copy said before the mark
            values = {"status": "running", "finished_at": None, "message": "", "message_json": None, **values}
            values = {name: value for name, value in values.items() if name in columns or name == "uid"}
        names = [name for name in values if name != "uid"]
        if names:
            db.execute(
                f"UPDATE runs SET {', '.join(f'{name} = ?' for name in names)} WHERE id = ?",
                (*(values[name] for name in names), run_id),
            )
        return run_id
    if run is None:
        raise MirrorError(Message("the agent sent rows of run {uid} before the run itself", uid=uid))
    if keep_id and isinstance(run.get("id"), int) and not isinstance(run.get("id"), bool):
        taken = db.execute("SELECT 1 FROM runs WHERE id = ?", (run["id"],)).fetchone()
        if taken is None:
            values = {"id": run["id"], **values}
    cursor_ = db.execute(
        f"INSERT INTO runs ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})", tuple(values.values())
    )
    return int(cursor_.lastrowid)


def _replace_rows(
    db: sqlite3.Connection, table: str, run_id: int, rows: list[Mapping[str, Any]], columns: frozenset[str]
) -> None:
    """INSERT OR REPLACE the rows under `run_id`, those naming the same columns in one statement."""
    groups: dict[tuple[str, ...], list[tuple[Any, ...]]] = {}
    for row in rows:
        values = {"run_id": run_id, **_known(columns, row, drop=("run_id",))}
        groups.setdefault(tuple(values), []).append(tuple(values.values()))
    for names, batch in groups.items():
        db.executemany(
            f"INSERT OR REPLACE INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", batch
        )


def _known(columns: frozenset[str], row: Mapping[str, Any], drop: tuple[str, ...]) -> dict[str, Any]:
    """The row's values for the columns its table has (others dropped), each a value SQLite takes."""
    return {name: _value(name, value) for name, value in row.items() if name in columns and name not in drop}


def _columns(db: sqlite3.Connection, table: str) -> frozenset[str]:
    return frozenset(name for (name,) in db.execute("SELECT name FROM pragma_table_info(?)", (table,)).fetchall())


def _value(name: str, value: Any) -> Any:
    if isinstance(value, (dict, list)):
        if name not in JSON_COLUMNS:
            raise MirrorError(Message("the agent sent an object for the column {name}", name=name))
        return json.dumps(value, separators=(",", ":"), allow_nan=False)
    if isinstance(value, bool):
        return int(value)
    return value
