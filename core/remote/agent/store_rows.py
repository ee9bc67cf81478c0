"""The agent's side of a followed run: its rows after a cursor, read from the run store in one snapshot, as
JSON-ready dicts of the tables' own columns, and split into chunks that fit on one protocol line.

A cursor is (step, seq): steps, reports and rank reports after `step`, events after `seq`. A report's steps,
report and rank reports are written in one transaction, so a snapshot never holds half a step, and a chunk
never splits one step's rows: a client that keeps what it got and asks again from the last step and seq it
holds misses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...base.text import Message
from ...store.run_store import RunNotFound, RunStore
from ..wire.protocol import (
    CHUNK_BYTES,
    EVENT_COLUMNS,
    RANK_REPORT_COLUMNS,
    REPORT_COLUMNS,
    RUN_COLUMNS,
    RUN_LIST_COLUMNS,
    STEP_COLUMNS,
    empty_chunk,
    encode,
)

STEP_TABLES = {"steps": STEP_COLUMNS, "reports": REPORT_COLUMNS, "rank_reports": RANK_REPORT_COLUMNS}


@dataclass
class Snapshot:
    """A run's row and its rows after a cursor, read together; `live`: running and its process alive."""

    run: dict[str, Any]
    live: bool
    steps: list[dict[str, Any]] = field(default_factory=list)
    reports: list[dict[str, Any]] = field(default_factory=list)
    rank_reports: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def has_rows(self) -> bool:
        return bool(self.steps or self.reports or self.rank_reports or self.events)

    def last_step(self, after: int) -> int:
        """The cursor's step after this snapshot (`after` when it has no step rows)."""
        return max([after, *(row["step"] for table in STEP_TABLES for row in getattr(self, table))])

    def last_seq(self, after: int) -> int:
        return max([after, *(row["seq"] for row in self.events)])


def run_list(store: RunStore, search: str = "") -> list[dict[str, Any]]:
    """Every run matching `search` (the store's one rule), newest first: every column of `runs`, id included,
    and `live` (running with its process alive, judged on this host)."""
    runs = store.list_runs(search)
    if not runs:
        return []
    by_id = {}
    ids = [run.id for run in runs]
    for start in range(0, len(ids), 500):  # SQLite's limit on host parameters
        part = ids[start : start + 500]
        query = f"SELECT {', '.join(RUN_LIST_COLUMNS)} FROM runs WHERE id IN ({', '.join('?' * len(part))})"
        for row in store.connection.execute(query, part).fetchall():
            by_id[row[0]] = dict(zip(RUN_LIST_COLUMNS, row))
    return [{**by_id[run.id], "live": run.live} for run in runs if run.id in by_id]


def fitting(rows: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The first of `rows` that fit in about `limit` bytes of JSON (at least one, so that a page always moves on)."""
    used = 0
    for index, row in enumerate(rows):
        used += _size(row)
        if used > limit and index:
            return rows[:index]
    return rows


def find_run(store: RunStore, *, run_id: int | None = None, uid: str | None = None) -> int:
    """The id of the run named by id or uid; RunNotFound when there is none."""
    if uid is not None:
        found = store.find_uid(uid)
        if found is None:
            raise RunNotFound(Message("no run with uid {uid} in {path}", uid=uid, path=str(store.path)))
        return found
    assert run_id is not None
    return store.run(run_id).id  # RunNotFound when missing


def snapshot(store: RunStore, run_id: int, after_step: int = 0, after_seq: int = 0) -> Snapshot:
    """The run's row and its rows after the cursor, in one read transaction; RunNotFound when it is gone."""
    db = store.connection
    db.execute("BEGIN")
    try:
        row = db.execute(f"SELECT {', '.join(RUN_COLUMNS)} FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise RunNotFound(Message("run {run_id} was deleted", run_id=run_id))
        live = store.run(run_id).live
        found = Snapshot(dict(zip(RUN_COLUMNS, row)), live)
        for table, columns in STEP_TABLES.items():
            order = "step, rank" if table == "rank_reports" else "step"
            rows = db.execute(
                f"SELECT {', '.join(columns)} FROM {table} WHERE run_id = ? AND step > ? ORDER BY {order}",
                (run_id, after_step),
            ).fetchall()
            setattr(found, table, [dict(zip(columns, values)) for values in rows])
        rows = db.execute(
            f"SELECT {', '.join(EVENT_COLUMNS)} FROM events WHERE run_id = ? AND seq > ? ORDER BY seq",
            (run_id, after_seq),
        ).fetchall()
        found.events = [dict(zip(EVENT_COLUMNS, values)) for values in rows]
    finally:
        db.execute("COMMIT")
    return found


def _size(row: dict[str, Any]) -> int:
    """The row's bytes on a line (with one more for the comma between rows)."""
    return len(encode(row))


def chunks(found: Snapshot, limit: int = CHUNK_BYTES) -> list[dict[str, Any]]:
    """The snapshot as chunks of about `limit` bytes of rows each (at least one, with the run row in every
    one): a step's rows stay together, steps and events each in order."""
    groups: dict[int, list[tuple[str, dict[str, Any]]]] = {}
    for table in STEP_TABLES:
        for row in getattr(found, table):
            groups.setdefault(row["step"], []).append((table, row))
    ordered_groups = [groups[step] for step in sorted(groups)]
    events = list(found.events)
    base = _size(found.run) + 100
    result = [empty_chunk(found.run)]
    used = base
    group_index = event_index = 0
    while group_index < len(ordered_groups) or event_index < len(events):
        take_event = event_index < len(events) and (
            group_index >= len(ordered_groups)
            or events[event_index]["step"] is None
            or events[event_index]["step"] <= ordered_groups[group_index][0][1]["step"]
        )
        if take_event:
            items = [("events", events[event_index])]
            event_index += 1
        else:
            items = ordered_groups[group_index]
            group_index += 1
        size = sum(_size(row) for _, row in items)
        if used + size > limit and used > base:
            result.append(empty_chunk(found.run))
            used = base
        for table, row in items:
            result[-1][table].append(row)
        used += size
    return result
