"""What a process the agent starts inherits: the run's uid, and no folder of ours on its Python path."""

from __future__ import annotations

import pytest

from gpu_train_monitor.distributed.env import ENV_RUN_UID, ENV_STOP_WITH_PID
from gpu_train_monitor.remote.spawn import _environment


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
