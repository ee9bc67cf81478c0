"""A followed run's chunks in few bytes (`"rows": "columns"`), and back, without changing a single stored value.

A fast run makes hundreds of steps a second and about ten reports; as JSON objects a step costs
~29 bytes (its loss as 17 digits) and a report ~150. Here, per stream (an `Encoder` on the agent, a `Decoder`
on the client, each fed the stream's chunks in order):

- steps: `{"first": step0, "epochs": [[epoch, count], ...], "loss": "<base64 of little-endian float32s>"}` when
  the chunk's steps are consecutive and every loss is a float32 value (what the run recorded: a float32 tensor's
  item), NaN standing for NULL; ~5.3 bytes a step. Any other chunk's steps go as lists (the columns' order), and
  so do a step or two when lists are shorter.
- reports, rank reports: each row `[mask, value, ...]`: bit i of `mask` set when column i differs from the same
  table's previous row in this stream, and only those values follow; an integer after an integer is sent as
  the difference (steps, samples, byte counts grow by little).
- events: lists in the columns' order (rare).
- the run row: without its uid once the first chunk said it; left out when nothing else changed. Empty tables
  are left out.

The columns' order travels in the first chunk ("columns"). Floats other than losses travel as
JSON's shortest exact text, so every value comes back as read from the remote store (non-finite report
values are null, as in objects; an infinite loss stays infinite here).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import struct
from collections.abc import Mapping
from typing import Any

from ...base.text import Message
from .protocol import BAD_REQUEST, CHUNK_TABLES, ProtocolError

MODE = "columns"
STEP_KEYS = ("step", "epoch", "loss")  # the steps table's columns, in protocol.STEP_COLUMNS' order
MASKED_TABLES = ("reports", "rank_reports")  # rows sent as their changes since the previous row
_F32 = struct.Struct("<f")


class Encoder:
    """The agent's side of one stream: chunks with rows as dicts (store_rows.chunks) to compact chunks."""

    def __init__(self, columns: Mapping[str, tuple[str, ...]] = CHUNK_TABLES) -> None:
        self._columns = {table: tuple(names) for table, names in columns.items()}
        self._previous: dict[str, list[Any]] = {}
        self._uid: str | None = None
        self._columns_sent = False

    def encode(self, chunk: Mapping[str, Any]) -> dict[str, Any]:
        """The chunk compacted; keys other than the run and the tables (e.g. "complete") pass unchanged."""
        compact = {key: value for key, value in chunk.items() if key != "run" and key not in self._columns}
        if not self._columns_sent:
            compact["columns"] = {table: list(names) for table, names in self._columns.items()}
            self._columns_sent = True
        run = dict(chunk.get("run") or {})
        if self._uid is None:
            self._uid = run.get("uid")
        elif run.get("uid") == self._uid:
            del run["uid"]
        if run:
            compact["run"] = run
        for table, names in self._columns.items():
            rows = chunk.get(table) or []
            if not rows:
                continue
            if table == "steps":
                compact[table] = _steps(rows, names)
            elif table in MASKED_TABLES:
                compact[table] = [self._masked(table, [_finite(row.get(name)) for name in names]) for row in rows]
            else:
                compact[table] = [[row.get(name) for name in names] for row in rows]
        return compact

    def _masked(self, table: str, values: list[Any]) -> list[Any]:
        previous = self._previous.get(table)
        self._previous[table] = values
        mask, sent = 0, []
        for index, value in enumerate(values):
            before = previous[index] if previous is not None else _NOTHING
            if before is not _NOTHING and _same(before, value):
                continue
            mask |= 1 << index
            sent.append(value - before if _is_int(before) and _is_int(value) else value)
        return [mask, *sent]


class Decoder:
    """The client's side of one stream: compact chunks back to chunks with rows as dicts (what mirror_chunk
    writes); ProtocolError(bad_request) for a chunk that is not this format."""

    def __init__(self) -> None:
        self._columns: dict[str, list[str]] | None = None
        self._previous: dict[str, list[Any]] = {}
        self._uid: Any = None

    def decode(self, compact: Mapping[str, Any]) -> dict[str, Any]:
        columns = compact.get("columns", self._columns)
        if not isinstance(columns, Mapping) or not all(
            isinstance(names, list) and all(isinstance(name, str) for name in names) for names in columns.values()
        ):
            raise _bad(Message("the chunk's columns are missing or not lists of names"))
        self._columns = dict(columns)
        chunk = {key: value for key, value in compact.items() if key not in columns and key not in ("columns", "run")}
        run = compact.get("run", {})
        if not isinstance(run, Mapping):
            raise _bad(Message("the chunk's run is not an object"))
        if self._uid is None:
            self._uid = run.get("uid")
        chunk["run"] = {"uid": self._uid, **run} if self._uid is not None else dict(run)
        for table, names in self._columns.items():
            rows = compact.get(table, [])
            if table == "steps" and isinstance(rows, Mapping):
                chunk[table] = _steps_back(rows, names)
                continue
            if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
                raise _bad(Message("the chunk's {table} are not lists", table=table))
            if table in MASKED_TABLES:
                chunk[table] = [dict(zip(names, self._unmasked(table, names, row))) for row in rows]
            elif all(len(row) == len(names) for row in rows):
                chunk[table] = [dict(zip(names, row)) for row in rows]
            else:
                raise _bad(Message("a row of {table} does not match its columns", table=table))
        return chunk

    def _unmasked(self, table: str, names: list[str], row: list[Any]) -> list[Any]:
        previous = self._previous.get(table)
        mask = row[0] if row else None
        if not _is_int(mask) or mask < 0 or mask >> len(names) or bin(mask).count("1") != len(row) - 1:
            raise _bad(Message("a row of {table} does not match its columns", table=table))
        if previous is None and mask != (1 << len(names)) - 1:
            raise _bad(Message("the first row of {table} lacks values", table=table))
        values, sent = [], iter(row[1:])
        for index in range(len(names)):
            if not mask >> index & 1:
                values.append(previous[index])  # type: ignore[index]  # previous is set: checked above
                continue
            value = next(sent)
            before = previous[index] if previous is not None else None
            values.append(before + value if _is_int(before) and _is_int(value) else value)
        self._previous[table] = values
        return values


def _steps(rows: list[Mapping[str, Any]], names: tuple[str, ...]) -> Any:
    """The steps as first step, epochs and float32 losses, or as lists when they do not fit that (or when
    lists are shorter: a step or two)."""
    lists = [[row.get(name) for name in names] for row in rows]
    if tuple(names) != STEP_KEYS or not _fits_float32(rows):
        return lists
    epochs: list[list[int]] = []
    for row in rows:
        if epochs and epochs[-1][0] == row["epoch"]:
            epochs[-1][1] += 1
        else:
            epochs.append([row["epoch"], 1])
    losses = [math.nan if row["loss"] is None else row["loss"] for row in rows]
    packed = struct.pack(f"<{len(losses)}f", *losses)
    packed_rows = {"first": rows[0]["step"], "epochs": epochs, "loss": base64.b64encode(packed).decode("ascii")}
    finite = all(row["loss"] is None or math.isfinite(row["loss"]) for row in rows)  # lists: infinity is null
    return lists if finite and len(_json(lists)) <= len(_json(packed_rows)) else packed_rows


def _fits_float32(rows: list[Mapping[str, Any]]) -> bool:
    """Consecutive integer steps and epochs, and losses that are None or float32 values (bit for bit)."""
    first = rows[0].get("step")
    for index, row in enumerate(rows):
        if set(row) != set(STEP_KEYS) or not _is_int(row["epoch"]) or not _is_int(row["step"]):
            return False
        if row["step"] != first + index:
            return False
        loss = row["loss"]
        if loss is None:
            continue
        if type(loss) is not float or math.isnan(loss):
            return False
        try:
            (narrow,) = _F32.unpack(_F32.pack(loss))
        except (OverflowError, struct.error):
            return False
        if narrow != loss:
            return False
    return True


def _steps_back(steps: Mapping[str, Any], names: list[str]) -> list[dict[str, Any]]:
    first, epochs, text = steps.get("first"), steps.get("epochs"), steps.get("loss")
    if (
        list(names) != list(STEP_KEYS)
        or not _is_int(first)
        or not isinstance(epochs, list)
        or not isinstance(text, str)
    ):
        raise _bad(Message("the chunk's steps are not first, epochs and loss"))
    if not all(isinstance(e, list) and len(e) == 2 and _is_int(e[0]) and _is_int(e[1]) and e[1] > 0 for e in epochs):
        raise _bad(Message("the chunk's steps' epochs are not [epoch, count] pairs"))
    try:
        packed = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise _bad(Message("the chunk's losses are not base64")) from None
    count = sum(e[1] for e in epochs)
    if len(packed) != 4 * count:
        raise _bad(Message("the chunk has {losses} losses for {steps} steps", losses=len(packed) // 4, steps=count))
    losses = iter(struct.unpack(f"<{count}f", packed))
    rows, step = [], first
    for epoch, times in epochs:
        for _ in range(times):
            loss = next(losses)
            rows.append({"step": step, "epoch": epoch, "loss": None if math.isnan(loss) else loss})
            step += 1
    return rows


class _Nothing:
    """No previous row yet."""


_NOTHING = _Nothing()


def _is_int(value: Any) -> bool:
    return type(value) is int


def _same(before: Any, value: Any) -> bool:
    """Equal and of one type, floats bit for bit (0.0 and -0.0 differ)."""
    if type(before) is not type(value):
        return False
    if type(value) is float:
        return struct.pack("<d", before) == struct.pack("<d", value)
    return bool(before == value)


def _finite(value: Any) -> Any:
    """What a JSON line carries of the value: non-finite floats are null (as protocol.encode makes them)."""
    return None if type(value) is float and not math.isfinite(value) else value


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _bad(message: Message) -> ProtocolError:
    return ProtocolError(BAD_REQUEST, message)
