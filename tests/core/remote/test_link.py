"""AgentLink against the real agent, run as a local process through the same code path as over ssh: hello,
requests from several threads, errors the agent answers, streams, latency, closing, and a transport that dies
(every waiting request and stream learns it at once, nothing hangs)."""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from gpu_train_monitor.remote.client.link import (
    LINK_CLOSED,
    LINK_LOST,
    AgentLink,
    ConnectionLost,
    RemoteRequestFailed,
    VersionMismatch,
)
from gpu_train_monitor.remote.client.target import RemoteTarget
from gpu_train_monitor.remote.wire import protocol
from tests.support.run_store_support import SHORT, record_run


def local_agent(store: Path) -> RemoteTarget:
    """The agent on this machine, serving `store`: the 'remote' of these tests."""
    return RemoteTarget.parse(
        "gpu-box", transport=(sys.executable, "-m", "gpu_train_monitor", "agent", "--runs-db", str(store))
    )


@pytest.fixture
def link(tmp_path):
    link = AgentLink(local_agent(tmp_path / "remote.sqlite3"), request_timeout_s=10.0)
    link.connect()
    yield link
    link.close()


def test_the_agent_says_who_it_is_and_answers_pings(link, tmp_path):
    assert link.hello["protocol"] == protocol.PROTOCOL_VERSION
    assert link.host_name == socket.gethostname()
    assert link.hello["store"] == str(tmp_path / "remote.sqlite3")
    assert link.latency_s() is None
    latency = link.ping()
    assert 0 < latency < 2 and link.latency_s() == latency
    assert link.request("runs") == {"runs": []}


def test_requests_from_several_threads_each_get_their_own_answer(link):
    answers: list[object] = []

    def ask(search: str) -> None:
        for _ in range(10):
            answers.append((search, link.request("runs", search=search)))

    threads = [threading.Thread(target=ask, args=(f"word{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(answers) == 40 and all(answer == {"runs": []} for _, answer in answers)


def test_an_error_the_agent_answers_keeps_its_words_and_the_link(link):
    with pytest.raises(RemoteRequestFailed) as refused:
        link.request("shell", command="rm -rf /")
    assert refused.value.kind == protocol.BAD_REQUEST and "shell" in str(refused.value)
    with pytest.raises(RemoteRequestFailed) as missing:
        link.request("run", uid="no-such-run")
    assert missing.value.kind == protocol.NOT_FOUND and "no-such-run" in str(missing.value)
    with pytest.raises(ValueError):
        link.request("run", id=3)  # would replace the request's own number
    assert link.ping() > 0  # still serving


def test_following_a_recorded_run_streams_its_rows_then_its_status(tmp_path):
    store = tmp_path / "remote.sqlite3"
    record_run(store, SHORT)
    with AgentLink(local_agent(store)) as link:
        link.connect()
        uid = link.request("runs")["runs"][0]["uid"]
        chunks, ended = [], threading.Event()
        reasons: list[str] = []
        link.stream(
            "follow",
            chunks.append,
            lambda reason: (reasons.append(reason), ended.set()),
            uid=uid,
            after_step=0,
            after_seq=0,
        )
        assert ended.wait(10)
    assert reasons == ["completed"]
    assert sorted(row["step"] for chunk in chunks for row in chunk["steps"]) == list(range(1, SHORT.max_steps + 1))


def test_a_killed_agent_ends_waiting_requests_and_streams_at_once(tmp_path):
    link = AgentLink(local_agent(tmp_path / "remote.sqlite3"), request_timeout_s=30.0)
    link.connect()
    ends: list[str] = []
    link.stream("readings", lambda data: None, ends.append, device="cpu", interval_s=5.0)
    errors: list[BaseException] = []

    def ping() -> None:
        try:
            link.ping()
        except BaseException as exc:
            errors.append(exc)

    os.kill(link.pid, signal.SIGSTOP)  # frozen: the ping waits for an answer that never comes
    asking = threading.Thread(target=ping)
    asking.start()
    time.sleep(0.5)
    assert asking.is_alive()
    os.kill(link.pid, signal.SIGKILL)
    started = time.monotonic()
    asking.join(5)
    assert not asking.is_alive() and time.monotonic() - started < 2  # not the 30 s timeout
    assert len(errors) == 1 and isinstance(errors[0], ConnectionLost)
    with pytest.raises(ConnectionLost, match="connection to gpu-box was lost"):
        link.ping()
    assert ends == [LINK_LOST] and not link.alive
    link.close()


def test_closing_ends_the_agent_and_its_streams(tmp_path):
    link = AgentLink(local_agent(tmp_path / "remote.sqlite3"))
    link.connect()
    ends: list[str] = []
    link.stream("readings", lambda data: None, ends.append, device="cpu", interval_s=5.0)
    started = time.monotonic()
    link.close()
    assert time.monotonic() - started < 3
    assert link.exit_code == 0  # the agent saw end of input and exited
    assert ends == [LINK_CLOSED]
    with pytest.raises(ConnectionLost):
        link.request("ping")


def test_another_protocol_version_here_is_refused_naming_both(tmp_path, monkeypatch):
    monkeypatch.setattr(protocol, "PROTOCOL_VERSION", protocol.PROTOCOL_VERSION + 1)
    link = AgentLink(local_agent(tmp_path / "remote.sqlite3"))
    with pytest.raises(VersionMismatch) as error:
        link.connect()
    assert f"speaks protocol {protocol.PROTOCOL_VERSION}" in str(error.value)
    assert "install the same gpu-train-monitor version on both machines" in str(error.value)
    assert not link.alive


def test_cancelling_a_stream_of_a_frozen_agent_returns_soon(tmp_path):
    """Cancel is best effort: a follow that stops (a second Ctrl+C) must not wait the request timeout."""
    link = AgentLink(local_agent(tmp_path / "remote.sqlite3"), request_timeout_s=30.0)
    link.connect()
    try:
        stream = link.stream("readings", lambda data: None, lambda reason: None, device="cpu", interval_s=5.0)
        os.kill(link.pid, signal.SIGSTOP)
        started = time.monotonic()
        link.cancel(stream)
        assert time.monotonic() - started < 10  # CANCEL_TIMEOUT_S, not the 30 s of other requests
    finally:
        os.kill(link.pid, signal.SIGKILL)
        link.close()


def test_a_stream_receiver_that_raises_fails_the_link_at_once(tmp_path, capsys):
    """Not a reader thread gone silent, with every request then waiting its timeout and streams never ending."""
    link = AgentLink(local_agent(tmp_path / "remote.sqlite3"), request_timeout_s=30.0)
    link.connect()
    ends: list[str] = []

    def broken(data: dict) -> None:
        raise KeyError("sample")

    try:
        link.stream("readings", broken, ends.append, device="cpu", interval_s=0.1)
        started = time.monotonic()
        with pytest.raises(ConnectionLost, match="a receiver of the agent's lines failed: KeyError"):
            while time.monotonic() - started < 60:  # the first sample comes once the agent has imported torch
                link.ping()
                time.sleep(0.05)
        assert ends == [LINK_LOST] and not link.alive  # without the fix: a ping's RemoteTimeout after 30 s
    finally:
        link.close()
    assert "KeyError" in capsys.readouterr().err  # the receiver's traceback, for a bug report
