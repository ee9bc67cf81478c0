"""The agent's protocol, written once for both sides: one JSON object per line on stdin/stdout.

Lines are UTF-8, `\\n`-terminated strict JSON (no NaN or infinity: those become null). A request may be up to
MAX_REQUEST_BYTES, an agent line up to MAX_REPLY_BYTES (the agent splits a followed run's backfill into chunks
of about CHUNK_BYTES); a longer line is refused and the reader goes on with the next one. The agent speaks
first (`agent_hello`), the client answers with `client_hello`; then requests `{"id", "op", ...}` get replies
`{"id", "ok": true, "result"}` or `{"id", "ok": false, "error", "kind"}`, and stream ops (readings, follow)
send `{"stream", "data"}` lines and finally `{"stream", "end": true, "reason"}`.

Table rows travel as dicts of the store's own columns (the schema's, so a mirror can write them back
unchanged) without `run_id`; a run row without `id`, except in the `runs` list, which has `id` and `live`.
The client asks `follow` and `run` for `"rows": "columns"` (gpu_train_monitor.remote.wire.compact_rows: a fifth of
the bytes); both ends speak the same protocol version (the hello checks it), so no other compact form is kept.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import IO, Any

from ...base.outputs import strict_json
from ...base.text import Message
from ...events.signals import Control
from ...store.schema import MIGRATIONS

PROTOCOL_VERSION = 1
MAX_REQUEST_BYTES = 64 * 1024  # a request line longer than this is refused (its rest read and dropped)
MAX_REPLY_BYTES = 4 * 1024 * 1024  # the longest agent line a client accepts
CHUNK_BYTES = 512 * 1024  # about how much a backfill chunk carries: well under MAX_REPLY_BYTES

# error kinds
BAD_REQUEST = "bad_request"  # malformed JSON, not an object, unknown op, a missing or ill-typed argument
TOO_LONG = "too_long"  # a line over the limit
USER_ERROR = "user_error"  # a ConfigError or other UserError: the message is the CLI's one line
NOT_FOUND = "not_found"  # no such run (or stream)
VERSION = "version"  # the two sides speak different protocol versions
INTERNAL = "internal"  # a bug in the agent (its traceback is on the agent's stderr); the agent goes on
ERROR_KINDS = frozenset({BAD_REQUEST, TOO_LONG, USER_ERROR, NOT_FOUND, VERSION, INTERNAL})

OPS = ("hello", "ping", "devices", "readings", "runs", "run", "follow", "start", "watch", "control", "cancel")
STREAM_OPS = frozenset({"readings", "follow"})  # ops whose result is {"stream": id}, then stream lines
CONTROLS = tuple(control.value for control in Control)  # "stop", "pause", "clear_cache"
EXIT_VERSION = 3  # the agent's exit code after a version mismatch in hello


class ProtocolError(Exception):
    """A line that breaks the protocol; `kind` is one of ERROR_KINDS, the message one line for people."""

    def __init__(self, kind: str, message: str, request_id: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.request_id = request_id  # the line's own id, when it could be read: the error answers that request


# ---- the tables' columns -----------------------------------------------------------------------------
def _schema_columns() -> dict[str, tuple[str, ...]]:
    """Every table's columns as the store's migrations create them (built in memory: the schema is the source)."""
    connection = sqlite3.connect(":memory:")
    try:
        for script in MIGRATIONS:
            connection.executescript(script)
        tables = [name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {
            table: tuple(name for (name,) in connection.execute("SELECT name FROM pragma_table_info(?)", (table,)))
            for table in tables
            if not table.startswith("sqlite_")
        }
    finally:
        connection.close()


_COLUMNS = _schema_columns()
RUN_LIST_COLUMNS: tuple[str, ...] = _COLUMNS["runs"]  # a `runs` list row: every column, id included (+ "live")
# a chunk's run row: not the local id, nor where a store copied the run from (each store says that of its own copies)
RUN_COLUMNS: tuple[str, ...] = tuple(c for c in _COLUMNS["runs"] if c not in ("id", "origin"))
STEP_COLUMNS: tuple[str, ...] = tuple(c for c in _COLUMNS["steps"] if c != "run_id")
REPORT_COLUMNS: tuple[str, ...] = tuple(c for c in _COLUMNS["reports"] if c != "run_id")
RANK_REPORT_COLUMNS: tuple[str, ...] = tuple(c for c in _COLUMNS["rank_reports"] if c != "run_id")
EVENT_COLUMNS: tuple[str, ...] = tuple(c for c in _COLUMNS["events"] if c != "run_id")  # data: the JSON text
CHUNK_TABLES = {"steps": STEP_COLUMNS, "reports": REPORT_COLUMNS, "rank_reports": RANK_REPORT_COLUMNS}
CHUNK_TABLES["events"] = EVENT_COLUMNS


# ---- encoding and decoding ---------------------------------------------------------------------------
def encode(message: Mapping[str, Any], limit: int | None = None) -> bytes:
    """`message` as one line of strict JSON bytes, `\\n` included; ProtocolError(too_long) over `limit`."""
    line = json.dumps(strict_json(dict(message)), allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    data = line.encode("utf-8") + b"\n"
    if limit is not None and len(data) - 1 > limit:
        raise ProtocolError(TOO_LONG, too_long_message(len(data) - 1, limit))
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


INT_MIN, INT_MAX = -(2**63), 2**63 - 1  # SQLite's integers: a number beyond them is no run, step or offset


class _OutOfRange(Exception):
    def __init__(self, digits: str) -> None:
        super().__init__(digits)
        self.digits = digits


def _bounded_int(digits: str) -> int:
    """A JSON integer within SQLite's 64-bit range; _OutOfRange beyond it (before the store overflows on it, and
    before a number of thousands of digits costs its conversion)."""
    value = int(digits) if len(digits) <= 20 else None
    if value is None or not INT_MIN <= value <= INT_MAX:
        raise _OutOfRange(digits)
    return value


def decode(line: bytes, limit: int | None = None) -> dict[str, Any]:
    """One line (with or without its `\\n`) as a JSON object; ProtocolError(bad_request / too_long) otherwise, and
    bad_request for an integer outside -2**63..2**63-1 anywhere in it (a run id, step, seq or offset that large is
    the sender's mistake, which the store would only fail on with an overflow)."""
    body = line[:-1] if line.endswith(b"\n") else line
    if body.endswith(b"\r"):
        body = body[:-1]
    if limit is not None and len(body) > limit:
        raise ProtocolError(TOO_LONG, too_long_message(len(body), limit))
    try:
        value = json.loads(body.decode("utf-8"), parse_constant=_no_constant, parse_int=_bounded_int)
    except UnicodeDecodeError:
        raise ProtocolError(BAD_REQUEST, Message("the line is not UTF-8 text")) from None
    except _OutOfRange as exc:
        shown = exc.digits if len(exc.digits) <= 30 else f"{exc.digits[:12]}...({len(exc.digits)} digits)"
        raise ProtocolError(
            BAD_REQUEST,
            Message("the line holds the number {number}, outside the 64-bit range of the run store", number=shown),
            _request_id(body),
        ) from None
    except ValueError as exc:
        raise ProtocolError(BAD_REQUEST, Message("the line is not JSON ({why})", why=str(exc))) from None
    except RecursionError:  # "[[[[..." a line deep: the parser gives up; the reader must go on all the same
        raise ProtocolError(BAD_REQUEST, Message("the line is JSON nested too deeply")) from None
    if not isinstance(value, dict):
        raise ProtocolError(BAD_REQUEST, Message("the line is JSON but not an object"))
    return value


def _request_id(body: bytes) -> int | None:
    """The `id` of a line that is JSON but was refused for a number too large elsewhere in it: its error then answers
    the request the sender waits on. None when it has none that fits."""
    try:
        value = json.loads(body.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None
    found = value.get("id") if isinstance(value, dict) else None
    if isinstance(found, int) and not isinstance(found, bool) and INT_MIN <= found <= INT_MAX:
        return found
    return None


def too_long_message(size: int, limit: int) -> Message:
    return Message("the line has {size} bytes, more than the {limit} allowed; it was ignored", size=size, limit=limit)


class LineReader:
    """Reads lines of at most `limit` bytes from a binary stream. A longer line is read to its end and dropped,
    and `read` raises ProtocolError(too_long) for it; the next call reads the line after it. An unterminated
    last line (the writer died mid-line) is dropped at end of file."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        self._stream = stream
        self.limit = limit

    def read(self) -> bytes | None:
        """The next line without its `\\n`, or None at end of file."""
        line = self._stream.readline(self.limit + 1)
        if line.endswith(b"\n"):
            return line[:-1]
        if len(line) <= self.limit:
            return None  # end of file (an unterminated last line is dropped)
        size = len(line)
        while True:  # the rest of an oversized line, read and dropped piece by piece
            rest = self._stream.readline(64 * 1024)
            size += len(rest)
            if not rest or rest.endswith(b"\n"):
                break
        raise ProtocolError(TOO_LONG, too_long_message(size - (1 if rest.endswith(b"\n") else 0), self.limit))

    def read_message(self) -> dict[str, Any] | None:
        """The next line decoded (ProtocolError for a bad one), or None at end of file."""
        line = self.read()
        return None if line is None else decode(line)


# ---- the messages' shapes ----------------------------------------------------------------------------
def agent_hello(app: str, host: str, store: str, schema: int) -> dict[str, Any]:
    """What the agent says first, at once."""
    return {"hello": {"protocol": PROTOCOL_VERSION, "app": app, "host": host, "store": store, "schema": schema}}


def client_hello(app: str, request_id: int = 0) -> dict[str, Any]:
    """The client's answer to the agent's hello (before any other request)."""
    return {"id": request_id, "op": "hello", "protocol": PROTOCOL_VERSION, "app": app}


def speaks_this_protocol(value: Any) -> bool:
    """Whether a hello's `protocol` is this side's: the same integer (not `true`, which JSON's 1 equals in
    Python, nor the text "1")."""
    return type(value) is int and value == PROTOCOL_VERSION


def version_mismatch(
    here_protocol: Any, here_app: str, there_protocol: Any, there_app: str, host: str, refusal: str = ""
) -> Message:
    """The one line both sides show when the two cannot talk (`here`: the side that says it), naming what
    actually differs: the protocol numbers, a protocol that is no number at all, or, when both speak the same
    protocol, the other side's own words on why it refused (`refusal`) beside both versions."""
    if type(there_protocol) is not int:
        return Message(
            "the gpu-train-monitor on {host} gives its protocol as {value}, not a number like this one's "
            "{here_protocol}: install the same gpu-train-monitor version on both machines: here {here_app}, "
            "on {host} {there_app}",
            value=_shown_value(there_protocol),
            here_protocol=here_protocol,
            here_app=here_app,
            there_app=there_app,
            host=host,
        )
    if there_protocol == here_protocol:
        return Message(
            "this gpu-train-monitor and the one on {host} both speak protocol {here_protocol}, yet {host} refused "
            "to talk ({refusal}): install the same gpu-train-monitor version on both machines: here {here_app}, "
            "on {host} {there_app}",
            here_protocol=here_protocol,
            refusal=" ".join(refusal.split()) or Message("it did not say why"),
            here_app=here_app,
            there_app=there_app,
            host=host,
        )
    return Message(
        "this gpu-train-monitor speaks protocol {here_protocol}, the one on {host} speaks {there_protocol}: "
        "install the same gpu-train-monitor version on both machines: here {here_app}, on {host} {there_app}",
        here_protocol=here_protocol,
        there_protocol=there_protocol,
        here_app=here_app,
        there_app=there_app,
        host=host,
    )


def _shown_value(value: Any) -> str:
    """A hello's value as it came on the wire (JSON), saying what it is when that could pass for a number."""
    if value is None:
        return Message("nothing")
    shown = json.dumps(value, ensure_ascii=True, default=repr)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    if isinstance(value, str):
        return Message("{value} (text)", value=shown)
    if isinstance(value, bool):
        return Message("{value} (a yes/no value)", value=shown)
    return shown


def request(request_id: int, op: str, **args: Any) -> dict[str, Any]:
    return {"id": request_id, "op": op, **args}


def reply(request_id: int, result: Mapping[str, Any]) -> dict[str, Any]:
    return {"id": request_id, "ok": True, "result": dict(result)}


def error_reply(request_id: int | None, message: str, kind: str) -> dict[str, Any]:
    """An error reply; the message is one line (newlines folded)."""
    return {"id": request_id, "ok": False, "error": " ".join(str(message).split()), "kind": kind}


def stream_data(stream: int, data: Mapping[str, Any]) -> dict[str, Any]:
    return {"stream": stream, "data": dict(data)}


def stream_end(stream: int, reason: str) -> dict[str, Any]:
    return {"stream": stream, "end": True, "reason": reason}


def empty_chunk(run: Mapping[str, Any]) -> dict[str, Any]:
    """A chunk of `follow` / `run`: the run row (without id) and no table rows yet."""
    return {"run": dict(run), "steps": [], "reports": [], "rank_reports": [], "events": []}
