"""The agent's loop in this process, on byte buffers: hello first, the version check, errors answered in order
while it goes on serving, and the end of input (or of its output) ending it at once."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from gpu_train_monitor.remote.agent import ops as agent_ops
from gpu_train_monitor.remote.agent.server import Agent
from gpu_train_monitor.remote.agent.spawn import log_folder
from gpu_train_monitor.remote.wire import protocol
from gpu_train_monitor.store.run_store import RunStore


def serve(tmp_path: Path, *lines: bytes | dict[str, Any], stdout: io.BytesIO | None = None) -> tuple[int, list]:
    """Run an agent on these input lines until their end; (exit code, every line it wrote)."""
    data = b"".join(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n" for line in lines)
    out = stdout if stdout is not None else io.BytesIO()
    with RunStore(tmp_path / "runs.sqlite3") as store:
        code = Agent(store, io.BytesIO(data), out, "1.2.3", "gpu-box", (tmp_path.resolve(),), ops=agent_ops.OPS).serve()
    written = out.getvalue() if isinstance(out, io.BytesIO) else b""
    return code, [json.loads(line) for line in written.splitlines()]


HELLO = protocol.client_hello("1.2.3")


def test_hello_ping_and_the_end_of_input(tmp_path: Path) -> None:
    code, lines = serve(tmp_path, HELLO, {"id": 1, "op": "ping"})
    assert code == 0
    store = str(tmp_path / "runs.sqlite3")
    assert lines[0] == {"hello": {"protocol": 1, "app": "1.2.3", "host": "gpu-box", "store": store, "schema": 6}}
    assert lines[1] == {"id": 0, "ok": True, "result": {"protocol": 1, "app": "1.2.3"}}
    assert lines[2]["id"] == 1 and lines[2]["ok"] and lines[2]["result"]["at"] > 0
    assert len(lines) == 3


def test_a_version_mismatch_ends_the_agent_with_exit_3_before_any_request(tmp_path: Path) -> None:
    code, lines = serve(tmp_path, {**HELLO, "protocol": 2, "app": "2.0"}, {"id": 1, "op": "ping"})
    assert code == protocol.EXIT_VERSION
    assert lines[1]["kind"] == "version" and "protocol 1" in lines[1]["error"] and "2.0" in lines[1]["error"]
    assert len(lines) == 2  # the ping after it was never answered


def test_requests_before_hello_are_refused_and_hello_still_works(tmp_path: Path) -> None:
    code, lines = serve(tmp_path, {"id": 4, "op": "runs"}, HELLO, {"id": 5, "op": "hello", "protocol": 1})
    assert code == 0
    assert lines[1]["id"] == 4 and lines[1]["kind"] == "bad_request"
    assert lines[2]["ok"] is True
    assert lines[3]["id"] == 5 and lines[3]["kind"] == "bad_request"  # said once only


@pytest.mark.parametrize(
    ("request_", "kind", "words"),
    [
        ({"id": 1, "op": "sudo"}, "bad_request", "no such op"),
        ({"id": 1}, "bad_request", "no such op"),
        ({"op": "ping"}, "bad_request", "integer id"),
        ({"id": True, "op": "ping"}, "bad_request", "integer id"),
        ({"id": 1, "op": "follow"}, "bad_request", "uid is missing"),
        ({"id": 1, "op": "follow", "uid": 5}, "bad_request", "uid has the wrong type"),
        ({"id": 1, "op": "follow", "uid": "u", "after_step": True}, "bad_request", "after_step"),
        ({"id": 1, "op": "follow", "uid": "u", "rows": "xml"}, "bad_request", "columns or objects"),
        ({"id": 1, "op": "run", "run_id": 3}, "not_found", "no run 3"),
        ({"id": 1, "op": "follow", "uid": "nobody"}, "not_found", "no run with uid nobody on gpu-box"),
        ({"id": 1, "op": "cancel", "stream": 9}, "not_found", "no stream 9"),
        ({"id": 1, "op": "runs", "offset": -1}, "bad_request", "offset"),
        ({"id": 1, "op": "control", "uid": "u", "control": "kill"}, "bad_request", "no such control"),
        ({"id": 1, "op": "readings", "device": "cpu", "interval_s": 0}, "bad_request", "interval_s"),
        ({"id": 1, "op": "watch", "argv": "train.py"}, "bad_request", "argv"),
        ({"id": 1, "op": "watch", "argv": []}, "bad_request", "argv"),
        ({"id": 1, "op": "watch", "argv": ["missing.py"]}, "user_error", "no script missing.py"),
        ({"id": 1, "op": "watch", "argv": ["x.py"], "cwd": "/no/such/folder"}, "user_error", "no folder"),
        ({"id": 1, "op": "start", "config": {"batch_size": -1}}, "user_error", "batch_size"),
        ({"id": 1, "op": "start", "config": {}, "uid": "a/b"}, "user_error", "not a run uid"),
        # no command strings: python's -c is refused, and -m only runs a module of the user's own in cwd
        ({"id": 1, "op": "watch", "argv": ["-c", "print(1)"]}, "user_error", "python -c is not run"),
        ({"id": 1, "op": "watch", "argv": ["-m", "http.server"]}, "user_error", "no module http.server"),
        ({"id": 1, "op": "watch", "argv": ["-m", "../x"]}, "user_error", "needs a module name"),
        ({"id": 1, "op": "watch", "argv": ["-u", "x.py"]}, "user_error", "python -u is not run"),
        ({"id": 1, "op": "start", "config": {"model": "tiny\x00cnn"}}, "user_error", "NUL character"),
    ],
)
def test_a_bad_request_is_answered_with_its_kind_and_the_agent_goes_on(
    tmp_path: Path, request_: dict, kind: str, words: str
) -> None:
    code, lines = serve(tmp_path, HELLO, request_, {"id": 2, "op": "ping"})
    assert code == 0
    assert lines[2]["ok"] is False and lines[2]["kind"] == kind, lines[2]
    assert words in lines[2]["error"]
    assert lines[3]["id"] == 2 and lines[3]["ok"] is True


def test_malformed_and_oversized_lines_are_refused_in_turn(tmp_path: Path) -> None:
    huge = b'{"id": 3, "op": "ping", "x": "' + b"a" * protocol.MAX_REQUEST_BYTES + b'"}\n'
    deep = b"[" * 30000 + b"]" * 30000 + b"\n"  # under the limit, but deeper than the parser's recursion
    code, lines = serve(tmp_path, HELLO, b"}{\n", huge, b"\xff\n", deep, {"id": 4, "op": "ping"})
    assert code == 0
    assert [line.get("kind") for line in lines[2:6]] == ["bad_request", "too_long", "bad_request", "bad_request"]
    assert all(line["id"] is None for line in lines[2:6])
    assert "nested too deeply" in lines[5]["error"]
    assert lines[6]["id"] == 4 and lines[6]["ok"]


def test_the_runs_list_comes_in_pages_that_fit_on_a_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"id": n, "config": "x" * 1000} for n in range(5, 0, -1)]
    monkeypatch.setattr(agent_ops.store_rows, "run_list", lambda store, search: rows)
    monkeypatch.setattr(agent_ops, "RUNS_PAGE_BYTES", 2500)
    code, lines = serve(tmp_path, HELLO, {"id": 1, "op": "runs"}, {"id": 2, "op": "runs", "offset": 4})
    assert lines[2]["result"] == {"runs": rows[:2], "more": True}
    assert lines[3]["result"] == {"runs": rows[4:]}


def test_a_bug_in_an_op_is_an_internal_error_and_the_agent_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    def broken(*args: object) -> dict:
        raise RuntimeError("boom")

    monkeypatch.setitem(agent_ops.OPS, "ping", broken)
    code, lines = serve(tmp_path, HELLO, {"id": 1, "op": "ping"}, {"id": 2, "op": "runs"})
    assert code == 0
    assert lines[2] == {"id": 1, "ok": False, "error": "the agent failed: RuntimeError: boom", "kind": "internal"}
    assert lines[3] == {"id": 2, "ok": True, "result": {"runs": []}}
    assert "RuntimeError: boom" in capsys.readouterr().err  # the traceback, for a bug report


class _Gone(io.BytesIO):
    """A stdout whose reader has left after the hello."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.writes += 1
        if self.writes > 1:
            raise BrokenPipeError
        return super().write(data)


def test_an_output_that_breaks_ends_the_agent(tmp_path: Path) -> None:
    out = _Gone()
    code, _ = serve(tmp_path, HELLO, *({"id": n, "op": "ping"} for n in range(1, 50)), stdout=out)
    assert code == 0
    assert out.writes == 2  # the hello, then the failed reply: nothing more was tried


def test_a_uid_the_store_holds_already_is_not_started_again(tmp_path: Path) -> None:
    """A second run under a recorded uid would be followed as the first one (and could not record itself)."""
    with RunStore(tmp_path / "runs.sqlite3") as store:
        columns = ("uid", "started_at", "heartbeat_at", "status", "pid", "pid_started_at", "host", "model")
        columns += ("dataset", "device", "device_name", "placement", "batch_size", "total_steps", "config", "started")
        values = ("taken", 1.0, 1.0, "completed", 1, 1.0, "gpu-box", "m", "d", "cpu", "cpu", "stream", 8, 5, "{}", "{}")
        store.connection.execute(f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('?' * 16)})", values)
        store.connection.commit()
    (tmp_path / "train.py").write_text("")
    watch = {"id": 2, "op": "watch", "argv": ["train.py"], "cwd": str(tmp_path), "uid": "taken"}
    code, lines = serve(tmp_path, HELLO, {"id": 1, "op": "start", "config": {}, "uid": "taken"}, watch)
    assert [line["kind"] for line in lines[2:]] == ["user_error", "user_error"]
    assert all("uid taken is recorded already on gpu-box" in line["error"] for line in lines[2:])
    assert not log_folder(tmp_path / "runs.sqlite3").exists()  # nothing was started


def test_a_nul_in_a_watched_script_s_arguments_is_refused_in_words(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("")
    watch = {"id": 1, "op": "watch", "argv": ["train.py", "a\x00b"], "cwd": str(tmp_path), "uid": "w"}
    code, lines = serve(tmp_path, HELLO, watch)
    assert lines[2]["kind"] == "user_error" and "NUL character" in lines[2]["error"]  # not an internal error
    assert not (log_folder(tmp_path / "runs.sqlite3") / "w.log").exists()  # the uid is not used up by the refused start
