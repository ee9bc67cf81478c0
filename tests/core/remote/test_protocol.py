"""The protocol's lines: what is refused (oversized, malformed, non-finite) and that the reader goes on after."""

from __future__ import annotations

import io
import json
import math
import sqlite3

import pytest

from gpu_train_monitor.remote.wire import protocol
from gpu_train_monitor.remote.wire.protocol import LineReader, ProtocolError
from gpu_train_monitor.store.rows import RunRow
from gpu_train_monitor.store.run_store import DERIVED, RANK_REPORT_COLUMNS, REPORT_COLUMNS, RunStore


def test_a_message_is_one_line_of_strict_json_even_with_newlines_and_non_finite_numbers() -> None:
    line = protocol.encode({"id": 1, "text": "two\nlines", "loss": math.nan, "big": math.inf, "nested": [math.nan]})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {"id": 1, "text": "two\nlines", "loss": None, "big": None, "nested": [None]}
    assert protocol.decode(line) == json.loads(line)


def test_unicode_travels_as_utf8() -> None:
    line = protocol.encode({"name": "训练 ü"})
    assert "训练 ü".encode() in line
    assert protocol.decode(line)["name"] == "训练 ü"


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "not an object"),
        (b'"hello"', "not an object"),
        (b'{"loss": NaN}', "not JSON"),
        (b'{"loss": Infinity}', "not JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"", "not JSON"),
    ],
)
def test_a_malformed_line_is_a_bad_request_naming_why(line: bytes, words: str) -> None:
    with pytest.raises(ProtocolError) as raised:
        protocol.decode(line)
    assert raised.value.kind == protocol.BAD_REQUEST
    assert words in str(raised.value)


def test_encode_and_decode_refuse_lines_over_their_limit() -> None:
    with pytest.raises(ProtocolError) as raised:
        protocol.encode({"blob": "x" * 100}, limit=50)
    assert raised.value.kind == protocol.TOO_LONG
    assert "50" in str(raised.value)
    with pytest.raises(ProtocolError) as raised:
        protocol.decode(b'{"blob": "' + b"x" * 100 + b'"}\n', limit=50)
    assert raised.value.kind == protocol.TOO_LONG


def test_the_reader_refuses_an_oversized_line_and_reads_the_next_one() -> None:
    stream = io.BytesIO(b'{"id": 1}\n' + b"y" * 1000 + b"\n" + b'{"id": 2}\n' + b"z" * 10)
    reader = LineReader(stream, limit=100)
    assert reader.read_message() == {"id": 1}
    with pytest.raises(ProtocolError) as raised:
        reader.read()
    assert raised.value.kind == protocol.TOO_LONG
    assert "1000 bytes" in str(raised.value)
    assert reader.read_message() == {"id": 2}
    assert reader.read() is None  # an unterminated last line (a writer killed mid-line) is dropped
    assert reader.read() is None


def test_a_line_exactly_at_the_limit_is_accepted() -> None:
    body = b'{"k": "' + b"a" * 91 + b'"}'
    assert len(body) == 100
    reader = LineReader(io.BytesIO(body + b"\n" + body + b"b\n"), limit=100)
    assert reader.read() == body
    with pytest.raises(ProtocolError):
        reader.read()
    assert reader.read() is None


def test_the_limits_are_the_plan_s() -> None:
    assert protocol.PROTOCOL_VERSION == 1
    assert protocol.MAX_REQUEST_BYTES == 64 * 1024
    assert protocol.MAX_REPLY_BYTES == 4 * 1024 * 1024
    assert protocol.CHUNK_BYTES < protocol.MAX_REPLY_BYTES // 2


def test_hello_shapes_and_the_version_sentence() -> None:
    hello = protocol.agent_hello("1.2.3", "gpu-box", "/data/runs.sqlite", 4)
    assert hello == {
        "hello": {"protocol": 1, "app": "1.2.3", "host": "gpu-box", "store": "/data/runs.sqlite", "schema": 4}
    }
    assert protocol.client_hello("1.2.3") == {"id": 0, "op": "hello", "protocol": 1, "app": "1.2.3"}
    text = protocol.version_mismatch(1, "1.2.3", 999, "9.9.9", "gpu-box")
    assert "install the same gpu-train-monitor version on both machines: here 1.2.3, on gpu-box 9.9.9" in text
    assert "protocol 1" in text and "999" in text


def test_replies_and_stream_lines() -> None:
    assert protocol.reply(3, {"at": 1.5}) == {"id": 3, "ok": True, "result": {"at": 1.5}}
    assert protocol.error_reply(None, "bad\nthing", protocol.BAD_REQUEST) == {
        "id": None,
        "ok": False,
        "error": "bad thing",
        "kind": "bad_request",
    }
    assert protocol.stream_data(4, {"a": 1}) == {"stream": 4, "data": {"a": 1}}
    assert protocol.stream_end(4, "completed") == {"stream": 4, "end": True, "reason": "completed"}
    assert protocol.CONTROLS == ("stop", "pause", "clear_cache")


def test_the_chunk_columns_are_the_store_s_tables_without_run_id(tmp_path) -> None:
    RunStore(tmp_path / "runs.sqlite").close()
    db = sqlite3.connect(tmp_path / "runs.sqlite")
    try:
        for table, columns in {**protocol.CHUNK_TABLES, "runs": protocol.RUN_LIST_COLUMNS}.items():
            stored = [name for (name,) in db.execute("SELECT name FROM pragma_table_info(?)", (table,))]
            assert list(columns) == [name for name in stored if name != "run_id"]
    finally:
        db.close()
    assert "id" not in protocol.RUN_COLUMNS and protocol.RUN_LIST_COLUMNS[0] == "id"
    assert tuple(REPORT_COLUMNS) == protocol.REPORT_COLUMNS
    assert tuple(RANK_REPORT_COLUMNS) == protocol.RANK_REPORT_COLUMNS
    run_fields = {f for f in RunRow.__dataclass_fields__ if f not in DERIVED}  # live, the throughput's unit: read
    assert run_fields <= set(protocol.RUN_LIST_COLUMNS)
    assert {"config", "started", "summary", "message_json"} <= set(protocol.RUN_COLUMNS)


@pytest.mark.parametrize(
    "line",
    [
        b'{"id": 1, "op": "run", "run_id": 9223372036854775808}',  # 2**63: one past SQLite's largest
        b'{"id": 1, "op": "follow", "uid": "u", "after_step": -9223372036854775809}',
        b'{"id": 1, "op": "runs", "offset": 1' + b"0" * 5000 + b"}",  # past even Python's int() digit limit
        b'{"id": 1, "op": "x", "deep": [{"a": [1, 99999999999999999999]}]}',
    ],
)
def test_an_integer_beyond_64_bits_anywhere_is_a_bad_request_in_one_line(line: bytes) -> None:
    with pytest.raises(ProtocolError) as raised:
        protocol.decode(line)
    assert raised.value.kind == protocol.BAD_REQUEST
    message = str(raised.value)
    assert "outside the 64-bit range" in message and "\n" not in message and len(message) < 200


def test_the_64_bit_bounds_themselves_are_numbers_like_any_other() -> None:
    line = b'{"id": 1, "run_id": 9223372036854775807, "after_step": -9223372036854775808, "at": 1e300}'
    assert protocol.decode(line) == {"id": 1, "run_id": 2**63 - 1, "after_step": -(2**63), "at": 1e300}


@pytest.mark.parametrize(
    ("theirs", "shown"),
    [("1", '"1" (text)'), (True, "true (a yes/no value)"), (None, "nothing"), (1.0, "1.0"), ([1], "[1]")],
)
def test_a_protocol_that_is_no_number_is_named_as_it_came(theirs: object, shown: str) -> None:
    """'speaks protocol 1, the one on gpu-box speaks 1' said nothing of what differed."""
    text = protocol.version_mismatch(1, "1.2.3", theirs, "9.9.9", "gpu-box")
    assert f"gives its protocol as {shown}, not a number like this one's 1" in text
    assert "here 1.2.3, on gpu-box 9.9.9" in text
    assert not protocol.speaks_this_protocol(theirs)


def test_the_same_protocol_refused_all_the_same_says_the_other_side_s_words() -> None:
    text = protocol.version_mismatch(1, "1.2.3", 1, "2.0.0", "gpu-box", "this agent needs app 2.0 or newer")
    assert "both speak protocol 1, yet gpu-box refused to talk (this agent needs app 2.0 or newer)" in text
    assert "here 1.2.3, on gpu-box 2.0.0" in text
    assert "it did not say why" in protocol.version_mismatch(1, "1.2.3", 1, "1.2.3", "gpu-box")
    assert protocol.speaks_this_protocol(protocol.PROTOCOL_VERSION)
