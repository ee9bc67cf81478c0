"""Following a remote run into the local store: a finished run arrives whole with its status, a copy that
holds part of it is completed from its cursor, and what cannot be followed says why at once."""

from __future__ import annotations

import sqlite3
import sys
import threading
import time

import pytest

from gpu_train_monitor.remote.client.follow import follow_into_store
from gpu_train_monitor.remote.client.link import AgentLink, AgentMissing, RemoteError
from gpu_train_monitor.remote.client.reconnecting import CONNECTING, ENDED, FOLLOWING
from gpu_train_monitor.remote.client.target import RemoteTarget
from tests.support.remote_stores import contents, local_agent
from tests.support.run_store_support import SHORT, record_run


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    """A remote store with one finished run of 30 steps; its uid."""
    path = tmp_path_factory.mktemp("remote") / "remote.sqlite3"
    record_run(path, SHORT.replace(max_steps=30))
    db = sqlite3.connect(path)
    (uid,) = db.execute("SELECT uid FROM runs").fetchone()
    db.close()
    return path, uid


def test_a_finished_run_arrives_whole_with_its_status(remote, tmp_path):
    path, uid = remote
    states: list[str] = []
    status = follow_into_store(
        local_agent(path), uid, tmp_path / "local.sqlite3", stop=threading.Event(), on_state=states.append
    )
    assert status == "completed"
    assert states == [CONNECTING, FOLLOWING, ENDED]
    assert contents(tmp_path / "local.sqlite3", uid) == contents(path, uid)


def test_a_partial_copy_is_completed_from_its_cursor(remote, tmp_path):
    path, uid = remote
    local = tmp_path / "local.sqlite3"
    follow_into_store(local_agent(path), uid, local, stop=threading.Event())
    db = sqlite3.connect(local)  # as if the connection had dropped after step 12
    db.execute("DELETE FROM steps WHERE step > 12")
    db.execute("DELETE FROM reports WHERE step > 12")
    db.execute("DELETE FROM events WHERE seq > 3")
    db.execute("UPDATE runs SET status = 'running', steps = 12")
    db.commit()
    db.close()
    assert follow_into_store(local_agent(path), uid, local, stop=threading.Event()) == "completed"
    assert contents(local, uid) == contents(path, uid)


def test_a_run_the_remote_does_not_have_is_said_at_once(remote, tmp_path):
    path, _ = remote
    started = time.monotonic()
    with pytest.raises(RemoteError, match="no run with uid not-there"):
        follow_into_store(local_agent(path), "not-there", tmp_path / "local.sqlite3", stop=threading.Event())
    assert time.monotonic() - started < 10


def test_a_first_connection_that_fails_is_not_retried(tmp_path):
    missing = ("import sys; sys.stderr.write('bash: gpu-train-monitor: command not found\\n'); sys.exit(127)",)
    target = RemoteTarget.parse("gpu-box", transport=(sys.executable, "-c", *missing))
    started = time.monotonic()
    with pytest.raises(AgentMissing):
        follow_into_store(target, "any", tmp_path / "local.sqlite3", stop=threading.Event())
    assert time.monotonic() - started < 5


class _BehindLink(AgentLink):
    """The agent's link, its clock two minutes behind this machine's."""

    def request(self, op: str, **args: object) -> dict:
        result = super().request(op, **args)
        return {**result, "at": result["at"] - 120.0} if op == "ping" else result


def test_clocks_that_disagree_are_said_once(remote, tmp_path):
    path, uid = remote
    problems: list[str] = []
    status = follow_into_store(
        local_agent(path),
        uid,
        tmp_path / "local.sqlite3",
        stop=threading.Event(),
        on_problem=problems.append,
        link_factory=_BehindLink,
    )
    assert status == "completed"
    assert len(problems) == 1 and "clocks of this machine and gpu-box differ by 120 s" in problems[0]
    problems.clear()
    follow_into_store(
        local_agent(path), uid, tmp_path / "local.sqlite3", stop=threading.Event(), on_problem=problems.append
    )
    assert problems == []  # clocks that agree: nothing to say
