"""What a process the agent starts inherits (the run's uid, no folder of ours on its Python path), and where its
record lives: beside its own store, apart from another store's in the same folder."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import psutil
import pytest

from gpu_train_monitor.distributed.env import ENV_RUN_UID, ENV_STOP_WITH_PID
from gpu_train_monitor.remote.agent.ops import OPS
from gpu_train_monitor.remote.agent.server import Agent
from gpu_train_monitor.remote.agent.spawn import Spawner, _environment, launch_of, log_folder
from gpu_train_monitor.remote.wire import protocol
from gpu_train_monitor.store.run_store import RunStore


def test_a_started_run_gets_its_uid_and_no_window_to_stop_with(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_STOP_WITH_PID, "123")
    env = _environment("run-1")
    assert env[ENV_RUN_UID] == "run-1" and ENV_STOP_WITH_PID not in env and env["PYTHONUNBUFFERED"] == "1"


def test_the_python_path_is_the_agents_own(monkeypatch: pytest.MonkeyPatch) -> None:
    # the child is the agent's interpreter and finds gpu_train_monitor installed; a folder of ours on the path
    # would hand a watched script our sub-packages (config, data, model...) for its own imports
    monkeypatch.setenv("PYTHONPATH", "/their/path")
    assert _environment("run-1")["PYTHONPATH"] == "/their/path"
    monkeypatch.delenv("PYTHONPATH")
    assert "PYTHONPATH" not in _environment("run-1")


def test_two_stores_in_one_folder_keep_their_started_processes_apart(tmp_path: Path) -> None:
    # one store's agent must never find (follow, report on, stop) what another store's agent started
    ours, theirs = tmp_path / "ours.sqlite3", tmp_path / "theirs.sqlite3"
    spawner = Spawner(theirs)
    launch = spawner.start("their-run", [sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert launch_of(theirs, "their-run") == launch and launch.alive()
        assert launch_of(ours, "their-run") is None
        assert log_folder(ours) != log_folder(theirs) and log_folder(theirs).parent == tmp_path
        with RunStore(ours) as store:
            request = {"id": 1, "op": "follow", "uid": "their-run"}
            hello = {"id": 0, "op": "hello", "protocol": protocol.PROTOCOL_VERSION, "app": "1.2.3"}
            data = b"".join(json.dumps(line).encode() + b"\n" for line in (hello, request))
            out = io.BytesIO()
            Agent(store, io.BytesIO(data), out, "1.2.3", "gpu-box", ops=OPS).serve()
        answer = json.loads(out.getvalue().splitlines()[-1])
        assert answer["ok"] is False and answer["kind"] == "not_found", answer
    finally:
        psutil.Process(launch.pid).kill()
        psutil.Process(launch.pid).wait(10)
        spawner.reap()
