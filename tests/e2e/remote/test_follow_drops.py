"""A dropped connection loses nothing: the agent is killed while a run records on the 'remote' (this machine,
reached through the same client code as over ssh), the follow reconnects to a new agent, backfills from the
steps it holds, and ends with every step, report and event of the remote store in the local one."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
import uuid

import psutil

from gpu_train_monitor.remote.client import reconnecting
from gpu_train_monitor.remote.client.follow import follow_into_store
from gpu_train_monitor.remote.client.reconnecting import FOLLOWING, RECONNECTING
from tests.support.remote_stores import contents, local_agent, start_recording


def agents() -> list[psutil.Process]:
    """This test's agent processes (the follow's transports)."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "agent" in child.cmdline():
                found.append(child)
        except psutil.NoSuchProcess:
            pass
    return found


def local_steps(path) -> int:
    if not path.exists():
        return 0
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT count(*) FROM steps").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        db.close()


def follow_through_a_drop(tmp_path, drop) -> tuple[list[str], list[str], int]:
    """Follow a 200-step run on the 'remote' while `drop(agent)` breaks the link after 20 steps; the states,
    the problems said and the steps held at the drop. Asserts the run arrives whole all the same."""
    remote, local = tmp_path / "remote" / "remote.sqlite3", tmp_path / "local.sqlite3"
    remote.parent.mkdir()
    uid = uuid.uuid4().hex
    run = start_recording(remote, uid, "--max-steps", "200")
    states: list[str] = []
    problems: list[str] = []
    outcome: dict[str, object] = {}
    stop = threading.Event()

    def follow() -> None:
        try:
            outcome["status"] = follow_into_store(
                local_agent(remote),
                uid,
                local,
                stop=stop,
                on_state=states.append,
                on_problem=problems.append,
                wait_for_run_s=120,
            )
        except BaseException as exc:
            outcome["error"] = exc

    follower = threading.Thread(target=follow)
    follower.start()
    try:
        deadline = time.monotonic() + 150
        while local_steps(local) < 20 and time.monotonic() < deadline and follower.is_alive():
            time.sleep(0.1)
        assert local_steps(local) >= 20, (states, problems, outcome, follower.is_alive())
        (agent,) = agents()
        drop(agent)  # the connection breaks mid-run; the run goes on
        held = local_steps(local)
        follower.join(120)
        assert not follower.is_alive()
    finally:
        stop.set()
        if run.poll() is None:
            run.kill()
        run.wait(30)
    assert outcome.get("status") == "completed", outcome
    assert RECONNECTING in states and states.count(FOLLOWING) >= 2
    assert held < 200  # the drop came mid-run
    copy, original = contents(local, uid), contents(remote, uid)
    assert len(original["steps"]) == 200
    assert copy == original
    return states, problems, held


def test_killing_the_agent_mid_run_loses_no_step(tmp_path):
    _, problems, _ = follow_through_a_drop(tmp_path, lambda agent: os.kill(agent.pid, signal.SIGKILL))
    assert "connection to gpu-box was lost" in problems[0] and "reconnecting in 1 s" in problems[0]


def test_a_link_gone_silent_is_noticed_by_its_ping_and_replaced(tmp_path, monkeypatch):
    monkeypatch.setattr(reconnecting, "PING_AFTER_S", 1.0)
    monkeypatch.setattr(reconnecting, "PING_TIMEOUT_S", 1.0)
    frozen: list[psutil.Process] = []

    def freeze(agent: psutil.Process) -> None:  # a laptop's lid closed: no end of file, just silence
        agent.suspend()
        frozen.append(agent)

    try:
        _, problems, _ = follow_through_a_drop(tmp_path, freeze)
    finally:
        for agent in frozen:
            if agent.is_running():
                agent.kill()
    assert "did not answer `ping` within 1 s" in problems[0]
