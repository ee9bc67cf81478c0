"""The agent signals only a process it started and can still identify: a row of the store naming a pid (crafted,
mirrored from a machine of the same name, or a run started by hand) is refused in words, and that process lives on.
"""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from gpu_train_monitor.remote.agent.ops import OPS
from gpu_train_monitor.remote.agent.server import Agent
from gpu_train_monitor.remote.agent.spawn import Spawner, log_folder
from gpu_train_monitor.remote.wire import protocol
from gpu_train_monitor.store.run_store import RunStore

HELLO = {"id": 0, "op": "hello", "protocol": protocol.PROTOCOL_VERSION, "app": "1.2.3"}
SLEEP = [sys.executable, "-c", "import time; time.sleep(120)"]


@pytest.fixture
def bystander() -> Iterator[psutil.Process]:
    """An unrelated process of the same user: SIGUSR2 (pause) or SIGINT (stop) would end it."""
    child = subprocess.Popen(SLEEP)
    try:
        yield psutil.Process(child.pid)
    finally:
        child.kill()
        child.wait()


def record_running(store_path: Path, uid: str, process: psutil.Process) -> None:
    """A row that says run `uid` trains here now, in `process` (its pid and start time: it looks live)."""
    columns = ("uid", "started_at", "heartbeat_at", "status", "pid", "pid_started_at", "host", "model", "dataset")
    columns += ("device", "device_name", "placement", "batch_size", "total_steps", "config", "started")
    now = time.time()
    values = (uid, now, now, "running", process.pid, process.create_time(), socket.gethostname(), "m", "d")
    values += ("cpu", "cpu", "stream", 8, 5, "{}", "{}")
    with RunStore(store_path) as store:
        store.connection.execute(f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('?' * 16)})", values)
        store.connection.commit()


def control(store_path: Path, uid: str, word: str) -> dict:
    data = b"".join(
        json.dumps(line).encode() + b"\n" for line in (HELLO, {"id": 1, "op": "control", "uid": uid, "control": word})
    )
    out = io.BytesIO()
    with RunStore(store_path) as store:
        Agent(store, io.BytesIO(data), out, "1.2.3", "gpu-box", ops=OPS).serve()
    return json.loads(out.getvalue().splitlines()[-1])


@pytest.mark.parametrize("word", ["pause", "stop", "clear_cache"])
def test_a_row_naming_a_process_the_agent_did_not_start_is_refused(
    tmp_path: Path, bystander: psutil.Process, word: str
) -> None:
    store = tmp_path / "runs.sqlite3"
    record_running(store, "crafted", bystander)
    answer = control(store, "crafted", word)
    assert answer["ok"] is False and answer["kind"] == "user_error", answer
    assert "was not started by the agent of this run store on gpu-box" in answer["error"]
    time.sleep(0.2)
    assert bystander.is_running() and bystander.status() != psutil.STATUS_ZOMBIE  # never signalled


def test_a_forged_launch_record_does_not_make_a_process_ours(tmp_path: Path, bystander: psutil.Process) -> None:
    # the record names the bystander with its true start time, but it was not started for this run's uid
    store = tmp_path / "runs.sqlite3"
    record_running(store, "forged", bystander)
    folder = log_folder(store)
    folder.mkdir()
    record = {"pid": bystander.pid, "started_at": bystander.create_time(), "args": ["sleep"]}
    (folder / "forged.json").write_text(json.dumps(record), encoding="utf-8")
    answer = control(store, "forged", "pause")
    assert answer["ok"] is False and "was not started by the agent" in answer["error"], answer
    time.sleep(0.2)
    assert bystander.is_running() and bystander.status() != psutil.STATUS_ZOMBIE


def test_a_process_the_agent_started_for_the_run_is_signalled(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    spawner = Spawner(store)
    launch = spawner.start("ours", SLEEP)
    try:
        process = psutil.Process(launch.pid)
        record_running(store, "ours", process)
        assert control(store, "ours", "stop") == {"id": 1, "ok": True, "result": {}}
        assert process.wait(10) is not None  # SIGINT ended the sleeping interpreter (KeyboardInterrupt)
    finally:
        if psutil.pid_exists(launch.pid):
            psutil.Process(launch.pid).kill()
        spawner.reap()
