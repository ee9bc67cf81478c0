"""The agent as a local subprocess on pipes (the same code path as over ssh, with ssh replaced by a local
command): hello and a version mismatch, devices, the runs list, following a recorded run from a cursor, a run
started through the agent that outlives it (stdin closed, or the agent killed), the controls, and lines the agent
must refuse while it goes on serving."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from gpu_train_monitor.remote.agent.spawn import launch_of, log_folder
from gpu_train_monitor.remote.wire import compact_rows, protocol
from gpu_train_monitor.store.run_store import RunStore
from tests.support.agent_pipe import EOF_LINE, AgentPipe
from tests.support.cli import FAST, cli

SHORT = {"device": "cpu", "model": "tiny-cnn", "synthetic_samples": 256, "batch_size": 16, "max_steps": 6}
# about 10 s of steps on a busy CPU: long enough to steer, short enough to finish when stopped
LONG = {"device": "cpu", "model": "tiny-cnn", "synthetic_samples": 4096, "batch_size": 8, "max_steps": 3000}


@pytest.fixture(autouse=True)
def _no_run_left_behind(tmp_path: Path) -> Iterator[None]:
    """Whatever a failing test leaves running (the agent's detached runs, by their launch records) is killed."""
    yield
    for record in log_folder(tmp_path / "runs.sqlite3").glob("*.json"):
        launch = launch_of(tmp_path / "runs.sqlite3", record.stem)
        if launch is not None and launch.alive():
            psutil.Process(launch.pid).kill()


def record_short_run(store: Path) -> None:
    result = cli("run", *FAST, "--batch-size", "16", "--max-steps", "6", "--runs-db", str(store))
    assert result.returncode == 0, result.stderr


def wait_for_status(store: Path, uid: str, timeout: float = 60.0) -> str:
    """The run's status once it has finished (read from the store directly, as a user would later)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with RunStore(store) as runs:
            run_id = runs.find_uid(uid)
            if run_id is not None and runs.run(run_id).status != "running":
                return runs.run(run_id).status
        time.sleep(0.3)
    raise AssertionError(f"run {uid} did not finish within {timeout} s")


def merged(chunks: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    tables = ("steps", "reports", "rank_reports", "events")
    return {table: [row for chunk in chunks for row in chunk[table]] for table in tables}


def test_the_agent_says_hello_first_then_answers_ping_and_devices(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    with AgentPipe(store) as agent:
        hello = agent.connect()
        assert hello["protocol"] == protocol.PROTOCOL_VERSION
        assert hello["store"] == str(store) and hello["schema"] >= 4 and hello["host"]
        before = time.time()
        assert before - 5 < agent.result("ping")["at"] < time.time() + 5
        devices = agent.result("devices", timeout=120)["devices"]  # torch loads now
        cpu = devices[0]
        assert cpu["spec"] == "cpu" and cpu["kind"] == "cpu" and cpu["capacity_bytes"] > 0
        assert set(cpu) == {"spec", "kind", "name", "capacity_bytes", "free_bytes", "used_bytes"}
        stream = agent.result("readings", device="cpu", interval_s=0.2)["stream"]
        first = agent.read_until(lambda line: line.get("stream") == stream)["data"]
        assert first["device"] == "cpu" and first["sample"]["capacity_bytes"] == cpu["capacity_bytes"]
        assert first["sample"]["process_rss_bytes"] > 0 and first["nvml"] is None
        assert agent.result("cancel", stream=stream) == {}
        _, end = agent.stream_lines(stream)
        assert end["reason"] == "cancelled"
        agent.close_stdin()
        assert agent.wait(10) == 0


def test_a_client_of_another_protocol_version_gets_one_clear_line_and_the_agent_exits_3(tmp_path: Path) -> None:
    with AgentPipe(tmp_path / "runs.sqlite3") as agent:
        agent.read_hello()
        agent.send({"id": 0, "op": "hello", "protocol": 999, "app": "9.9.9"})
        answer = agent.read()
        assert answer["ok"] is False and answer["kind"] == "version" and answer["id"] == 0
        assert "999" in answer["error"]
        assert "install the same gpu-train-monitor version on both machines" in answer["error"]
        assert "9.9.9" in answer["error"]
        assert agent.wait(10) == protocol.EXIT_VERSION
        assert agent.read() == EOF_LINE
        assert "protocol 1" in agent.stderr() and "999" in agent.stderr()  # said on stderr too, for ssh's user


def test_bad_lines_are_answered_with_an_error_and_the_agent_keeps_serving(tmp_path: Path) -> None:
    with AgentPipe(tmp_path / "runs.sqlite3") as agent:
        agent.read_hello()
        agent.send({"id": 5, "op": "runs"})  # before hello
        first = agent.read()
        assert first["id"] == 5 and first["kind"] == "bad_request" and "hello" in first["error"]
        agent.send(protocol.client_hello("tests"))
        assert agent.read()["ok"] is True
        agent.send(b"{not json\n")
        assert agent.read()["kind"] == "bad_request"
        agent.send(b"[1, 2, 3]\n")
        assert agent.read()["kind"] == "bad_request"
        agent.send(b'{"id": 6, "op": "format_disk"}\n')
        assert agent.read() == {"id": 6, "ok": False, "error": "no such op: 'format_disk'", "kind": "bad_request"}
        agent.send(b'{"id": 7, "op": "run", "run": 1}\n')
        assert agent.read()["kind"] == "bad_request"  # no id or uid: a missing argument
        agent.send(b'{"id": 8, "op": "runs", "search": 3}\n')
        assert agent.read()["kind"] == "bad_request"
        agent.send(b'{"id": "x", "op": "ping"}\n')
        assert agent.read()["kind"] == "bad_request"
        oversized = b'{"id": 9, "op": "ping", "pad": "' + b"x" * (protocol.MAX_REQUEST_BYTES + 10) + b'"}\n'
        agent.send(oversized)
        refused = agent.read()
        assert refused["kind"] == "too_long" and refused["id"] is None
        assert str(protocol.MAX_REQUEST_BYTES) in refused["error"]
        assert agent.result("ping")["at"] > 0  # still serving, the rest of the long line dropped
        assert agent.request("run", run_id=12345)["kind"] == "not_found"
        assert agent.request("follow", uid="no-such-run")["kind"] == "not_found"
        assert agent.request("cancel", stream=77)["kind"] == "not_found"
        agent.close_stdin()
        assert agent.wait(10) == 0


def test_follow_sends_a_recorded_run_from_the_cursor_then_ends_with_its_status(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    record_short_run(store)
    with AgentPipe(store) as agent:
        agent.connect()
        listed = agent.result("runs")["runs"]
        assert len(listed) == 1 and listed[0]["status"] == "completed" and listed[0]["live"] is False
        assert set(protocol.RUN_LIST_COLUMNS) | {"live"} == set(listed[0])
        uid = listed[0]["uid"]
        assert agent.result("runs", search="no-such-model")["runs"] == []

        stream = agent.result("follow", uid=uid, after_step=0, after_seq=0)["stream"]
        chunks, end = agent.stream_lines(stream)
        assert end["reason"] == "completed"
        rows = merged(chunks)
        assert [row["step"] for row in rows["steps"]] == [1, 2, 3, 4, 5, 6]
        assert set(rows["steps"][0]) == set(protocol.STEP_COLUMNS)
        assert rows["reports"] and set(rows["reports"][0]) == set(protocol.REPORT_COLUMNS)
        kinds = [row["kind"] for row in rows["events"]]
        assert {"MemoryBreakdown", "EpochEnded"} <= set(kinds)
        assert chunks[-1]["run"]["uid"] == uid and "id" not in chunks[-1]["run"]
        assert json.loads(chunks[-1]["run"]["config"])["model"] == "tiny-cnn"

        last_seq = rows["events"][-1]["seq"]
        stream = agent.result("follow", uid=uid, after_step=3, after_seq=last_seq - 1)["stream"]
        later, end = agent.stream_lines(stream)
        assert end["reason"] == "completed"
        assert [row["step"] for row in merged(later)["steps"]] == [4, 5, 6]
        assert [row["seq"] for row in merged(later)["events"]] == [last_seq]

        whole = agent.result("run", run_id=listed[0]["id"])
        assert whole["complete"] is True and [row["step"] for row in whole["steps"]] == [1, 2, 3, 4, 5, 6]
        assert agent.result("run", uid=uid)["events"] == rows["events"]


def test_a_run_started_through_the_agent_outlives_the_connection(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    with AgentPipe(store) as agent:
        agent.connect()
        started = agent.result("start", config=SHORT, uid="outlives-1", name="from afar")
        assert started["uid"] == "outlives-1" and started["pid"] > 0
        agent.close_stdin()  # the connection drops at once
        assert agent.wait(10) == 0
    assert wait_for_status(store, "outlives-1") == "completed"
    log = log_folder(store) / "outlives-1.log"
    assert "status      completed" in log.read_text(encoding="utf-8")
    with RunStore(store) as runs:
        assert runs.run(runs.find_uid("outlives-1")).steps == 6


def test_a_killed_agent_closes_its_pipe_and_its_run_goes_on(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    with AgentPipe(store) as agent:
        agent.connect()
        run_process = psutil.Process(agent.result("start", config=SHORT, uid="killed-agent")["pid"])
        stream = agent.result("follow", uid="killed-agent")["stream"]
        agent.read_until(lambda line: line.get("stream") == stream, timeout=60)  # recorded and streaming
        agent.process.kill()
        assert agent.read_until(lambda line: line is EOF_LINE, timeout=5) is EOF_LINE
        assert agent.wait(5) != 0
        assert run_process.is_running()
    assert wait_for_status(store, "killed-agent") == "completed"
    run_process.wait(30)  # and it exits by itself


def test_stop_pause_and_clear_cache_reach_a_run_the_agent_started(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    with AgentPipe(store) as agent:
        agent.connect()
        agent.result("start", config=LONG, uid="steered")
        stream = agent.result("follow", uid="steered")["stream"]
        events: list[str] = []
        steps: list[int] = []

        def until(done: Any) -> None:
            while not done():
                line = agent.read_until(lambda line: line.get("stream") == stream, timeout=60)
                assert not line.get("end"), line
                events.extend(row["kind"] for row in line["data"]["events"])
                steps.extend(row["step"] for row in line["data"]["steps"])

        def until_event(kind: str) -> None:
            until(lambda: kind in events)

        until(lambda: len(steps) > 0)  # training: its signal handlers are in place
        assert agent.result("control", uid="steered", control="pause") == {}
        until_event("RunPaused")
        assert agent.result("control", uid="steered", control="pause") == {}  # a toggle: resumes
        until_event("RunResumed")
        assert agent.result("control", uid="steered", control="clear_cache") == {}
        until_event("CacheCleared")
        assert agent.result("control", uid="steered", control="stop") == {}
        _, end = agent.stream_lines(stream, timeout=60)
        assert end["reason"] == "stopped"
        refused = agent.request("control", uid="steered", control="stop")
        assert refused["kind"] == "user_error" and "not running (it is stopped)" in refused["error"]
        assert agent.request("control", uid="nobody", control="stop")["kind"] == "not_found"
        assert agent.request("control", uid="steered", control="reboot")["kind"] == "bad_request"


def test_a_bad_config_is_refused_and_a_run_that_fails_to_start_ends_its_stream_saying_why(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    with AgentPipe(store) as agent:
        agent.connect()
        refused = agent.request("start", config={**SHORT, "batch_size": 0})
        assert refused["kind"] == "user_error" and refused["field"] == "batch_size" and "batch_size" in refused["error"]
        assert agent.request("start", config=SHORT, uid="../escape")["kind"] == "user_error"
        assert not (tmp_path.parent / "escape.log").exists()
        missing = agent.request("start", config={**SHORT, "model": str(tmp_path / "missing.py") + ":build"})
        assert missing["kind"] == "user_error" and missing["field"] == "model", missing  # no file: nothing starts
        (tmp_path / "broken.py").write_text("def build():\n    raise ValueError('no such layer')\n")
        agent.result("start", config={**SHORT, "model": str(tmp_path / "broken.py") + ":build"}, uid="fails")
        stream = agent.result("follow", uid="fails")["stream"]
        data, end = agent.stream_lines(stream, timeout=60)
        assert data == [] and end["reason"] == "failed" and "no such layer" in end["message"], end
        assert agent.request("start", config=SHORT, uid="fails")["kind"] == "user_error"  # a uid starts once


TRAIN = """\
import argparse
import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=3)
args = parser.parse_args()
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(args.steps):
    loss = nn.functional.mse_loss(model(torch.randn(3, 4)), torch.randn(3, 1))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step + 1} loss {loss.item()!r}", flush=True)
"""


def test_a_script_watched_through_the_agent_is_recorded_and_followed_as_rows(tmp_path: Path) -> None:
    folder = tmp_path / "research"
    (folder / "core").mkdir(parents=True)  # a project's own `core` package must not shadow ours
    (folder / "core" / "__init__.py").write_text("raise ImportError('the project core')\n")
    (folder / "train.py").write_text(TRAIN)
    store = tmp_path / "runs.sqlite3"
    with AgentPipe(store) as agent:
        agent.connect()
        started = agent.result("watch", argv=["train.py", "--steps", "5"], cwd=str(folder), name="remote", uid="w1")
        assert started["uid"] == "w1"
        stream = agent.result("follow", uid="w1", rows=compact_rows.MODE)["stream"]
        lines, end = agent.stream_lines(stream, timeout=90)
        assert end["reason"] == "completed", (end, (log_folder(store) / "w1.log").read_text())
        assert "columns" in lines[0]  # the columns travel with the first chunk
        assert all("columns" not in line for line in lines[1:])  # sent once per stream
        decoder = compact_rows.Decoder()
        chunks = [decoder.decode(line) for line in lines]
        assert [row["step"] for row in merged(chunks)["steps"]] == [1, 2, 3, 4, 5]
        assert chunks[0]["run"]["name"] == "remote" and chunks[0]["run"]["dataset"] == "script"
    log = (log_folder(store) / "w1.log").read_text(encoding="utf-8")
    assert "step 5 loss" in log  # the script's own output, kept on the remote


def test_a_followed_run_killed_with_sigkill_ends_its_stream_interrupted(tmp_path: Path) -> None:
    with AgentPipe(tmp_path / "runs.sqlite3") as agent:
        agent.connect()
        run_process = psutil.Process(agent.result("start", config=LONG, uid="killed-run")["pid"])
        stream = agent.result("follow", uid="killed-run")["stream"]
        agent.read_until(lambda line: line.get("stream") == stream and line["data"]["steps"], timeout=60)
        run_process.kill()  # nothing of it can record its end
        _, end = agent.stream_lines(stream, timeout=20)
        assert end["reason"] == "interrupted"
