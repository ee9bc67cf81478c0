"""What one connection may ask of the agent, on byte buffers as in test_agent_loop: a bounded number of streams
(300 `readings` streams made 302 threads and 535 MB), and numbers within the store's 64 bits (2**63 as a run id
was an OverflowError in SQLite, answered as the agent's own bug)."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from gpu_train_monitor.remote.agent import ops as agent_ops
from gpu_train_monitor.remote.agent.server import MAX_STREAMS, Agent, StartStream, Stream
from gpu_train_monitor.remote.wire import protocol
from gpu_train_monitor.store.run_store import RunStore

HELLO = protocol.client_hello("1.2.3")


def serve(tmp_path: Path, *lines: bytes | dict[str, Any]) -> list[dict[str, Any]]:
    """Run an agent on these input lines until their end; every line it wrote."""
    data = b"".join(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n" for line in lines)
    out = io.BytesIO()
    with RunStore(tmp_path / "runs.sqlite3") as store:
        assert Agent(store, io.BytesIO(data), out, "1.2.3", "gpu-box", ops=agent_ops.OPS).serve() == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def replies(lines: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {line["id"]: line for line in lines if "ok" in line and line["id"]}


def test_one_stream_more_than_a_connection_may_have_is_refused_naming_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[int] = []
    lock = threading.Lock()

    def waiting_stream(agent: Agent, request_id: int, request: dict[str, Any]) -> StartStream:
        def run(stream: Stream) -> None:
            with lock:
                started.append(stream.id)
            stream.wait(60)  # until the agent ends (its input's end)

        return StartStream(run)

    monkeypatch.setitem(agent_ops.OPS, "readings", waiting_stream)
    asked = [{"id": n, "op": "readings", "device": "cpu"} for n in range(1, MAX_STREAMS + 2)]
    answered = replies(serve(tmp_path, HELLO, *asked, {"id": 999, "op": "ping"}))
    assert all(answered[n]["ok"] and answered[n]["result"] == {"stream": n} for n in range(1, MAX_STREAMS + 1))
    refused = answered[MAX_STREAMS + 1]
    assert refused["ok"] is False and refused["kind"] == protocol.USER_ERROR
    assert f"{MAX_STREAMS} streams running" in refused["error"]
    assert answered[999]["ok"]  # the agent goes on serving
    assert sorted(started) == list(range(1, MAX_STREAMS + 1))  # nothing started for the one refused


def test_the_cap_is_a_few_dozen() -> None:
    assert 16 <= MAX_STREAMS <= 64


@pytest.mark.parametrize(
    "request_",
    [
        {"id": 1, "op": "run", "run_id": 2**63},
        {"id": 1, "op": "run", "run_id": 1, "after_step": 2**64},
        {"id": 1, "op": "runs", "offset": -(2**63) - 1},
    ],
)
def test_a_number_beyond_64_bits_is_a_bad_request_not_the_agent_s_bug(
    tmp_path: Path, request_: dict[str, Any], capsys: pytest.CaptureFixture
) -> None:
    lines = serve(tmp_path, HELLO, request_, {"id": 2, "op": "ping"})
    refused = lines[2]
    assert refused["ok"] is False and refused["kind"] == protocol.BAD_REQUEST, refused
    assert refused["id"] == 1  # it answers the request its sender waits on
    assert "outside the 64-bit range" in refused["error"]
    assert lines[3]["id"] == 2 and lines[3]["ok"]
    assert "Traceback" not in capsys.readouterr().err
