"""`runs list|show --remote HOST` with what another machine may send: pages that never end, and text that would
drive the terminal (an escape sequence in a run's name, a carriage return in the store's path). The CLI runs in
this process; the agent is scripted, or the real one reached through the ssh stand-in (tests.support.local_ssh)."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from gpu_train_monitor.cli import remote_commands
from gpu_train_monitor.remote.client import link as link_module
from gpu_train_monitor.remote.client.failures import RemoteRequestFailed
from gpu_train_monitor.store.run_store import RunStore
from tests.support.cli import cli_in_process, user_error_line
from tests.support.local_ssh import LOCAL_SSH
from tests.support.run_rows import run_row

ESC = "\x1b[2J"  # clear the screen


def listed_run(run_id: int, **changes: Any) -> dict[str, Any]:
    """A `runs` list row as the agent sends it."""
    return {**vars(run_row(id=run_id, uid=f"u{run_id}", **changes)), "config": "{}"}


class ScriptedLink:
    """An AgentLink whose agent answers `runs` with `pages(offset)` (or raises what it returns)."""

    pages: Any = None
    store = "/data/runs.sqlite3"

    def __init__(self, target: Any, **_: Any) -> None:
        self.target = target
        self.hello = {"store": self.store}
        self.asked: list[int] = []

    def connect(self) -> dict[str, Any]:
        return self.hello

    def request(self, op: str, **args: Any) -> dict[str, Any]:
        assert op == "runs"
        self.asked.append(args["offset"])
        assert len(self.asked) < 5000, "the client asks again and again"  # without the bound: forever
        answer = type(self).pages(args["offset"])
        if isinstance(answer, Exception):
            raise answer
        return answer

    def close(self) -> None:
        pass


@pytest.fixture
def agent(monkeypatch: pytest.MonkeyPatch) -> type[ScriptedLink]:
    class Link(ScriptedLink):
        pass

    monkeypatch.setattr(link_module, "AgentLink", Link)
    return Link


def test_an_agent_that_always_answers_more_with_the_same_page_is_one_line(agent: type[ScriptedLink]) -> None:
    agent.pages = lambda offset: {"runs": [listed_run(2), listed_run(1)], "more": True}
    line = user_error_line(cli_in_process("runs", "list", "--remote", "gpu-box"), "gpu-box", "run 2 twice")
    assert "listing stopped" in line


def test_more_with_an_empty_page_is_one_line(agent: type[ScriptedLink]) -> None:
    agent.pages = lambda offset: {"runs": [listed_run(3)], "more": True} if offset == 0 else {"runs": [], "more": True}
    user_error_line(cli_in_process("runs", "list", "--remote", "gpu-box"), "said more runs follow from 1 but sent none")


def test_pages_that_go_on_forever_stop_at_the_bound(agent: type[ScriptedLink], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remote_commands, "MAX_RUN_PAGES", 5)
    agent.pages = lambda offset: {"runs": [listed_run(1_000_000 - offset)], "more": True}  # a new run every time
    user_error_line(cli_in_process("runs", "list", "--remote", "gpu-box"), "more than 5 pages of runs")


def test_pages_that_move_on_are_all_listed(agent: type[ScriptedLink]) -> None:
    pages = {0: {"runs": [listed_run(3), listed_run(2)], "more": True}, 2: {"runs": [listed_run(1)]}}
    agent.pages = pages.__getitem__
    result = cli_in_process("runs", "list", "--json", "--remote", "gpu-box")
    assert result.returncode == 0, result.stderr
    assert [run["id"] for run in json.loads(result.stdout)] == [3, 2, 1]


def test_the_remote_s_words_in_an_error_are_escaped_on_one_line(agent: type[ScriptedLink]) -> None:
    agent.pages = lambda offset: RemoteRequestFailed(f"no such thing {ESC}\rgpu-train-monitor: all fine", "internal")
    line = user_error_line(cli_in_process("runs", "list", "--remote", "gpu-box"), "no such thing \\x1b[2J\\r")
    assert "\x1b" not in line and "\r" not in line


def test_a_remote_run_name_and_store_path_are_printed_escaped(agent: type[ScriptedLink]) -> None:
    agent.pages = lambda offset: {"runs": [listed_run(1, name=f"mine{ESC}")]}
    result = cli_in_process("runs", "list", "--remote", "gpu-box")
    assert result.returncode == 0, result.stderr
    assert "mine\\x1b[2J" in result.stdout and "\x1b" not in result.stdout
    agent.store = "/data/a\rb/runs.sqlite3"
    agent.pages = lambda offset: {"runs": []}
    result = cli_in_process("runs", "list", "--remote", "gpu-box")
    assert result.stdout == "no runs yet on gpu-box (/data/a\\rb/runs.sqlite3)\n"


def _recorded_run(path: Path, name: str, note: str, message: str) -> None:
    """A finished run in the store at `path`, as a run there recorded it (only what `runs show` reads)."""
    with RunStore(path):
        pass
    columns = {
        "uid": "u1",
        "name": name,
        "note": note,
        "started_at": 1.0,
        "heartbeat_at": 2.0,
        "finished_at": 2.0,
        "status": "failed",
        "message": message,
        "pid": 1,
        "pid_started_at": 1.0,
        "host": "gpu-box",
        "model": "tiny-cnn",
        "dataset": "synthetic",
        "device": "cpu",
        "device_name": "cpu",
        "placement": "stream",
        "batch_size": 8,
        "total_steps": 5,
        "config": "{}",
        "started": "{}",
    }
    db = sqlite3.connect(path)
    try:
        db.execute(
            f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", [*columns.values()]
        )
        db.commit()
    finally:
        db.close()


def test_runs_show_remote_prints_what_the_remote_recorded_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the real agent: the run's name, note and message as that machine's store has them."""
    store = tmp_path / "remote.sqlite3"
    _recorded_run(store, f"resnet{ESC}", "line one\rline two", f"boom{ESC}")
    monkeypatch.setenv("GPU_TRAIN_MONITOR_SSH", LOCAL_SSH)
    agent_command = f"{sys.executable} -m gpu_train_monitor agent --runs-db {store}"
    result = cli_in_process("runs", "show", "1", "--remote", "gpu-box", "--agent-command", agent_command)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\r" not in result.stdout
    assert "run 1: resnet\\x1b[2J" in result.stdout
    assert "line one\\rline two" in result.stdout and "failed: boom\\x1b[2J" in result.stdout


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("runs", "list", "--remote", "box:\u00b2"), ("'box:\u00b2'", "the port must be a number")),
        (("watch", "--remote-cwd", "/srv/project", "--", "python", "train.py"), ("--remote-cwd", "--remote HOST")),
    ],
)
def test_remote_options_a_user_mistypes_are_one_line(args: tuple[str, ...], words: tuple[str, ...]) -> None:
    user_error_line(cli_in_process(*args), *words)
