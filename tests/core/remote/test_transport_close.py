"""Closing a link ends its whole transport, and never waits long on a pipe: a transport whose child outlives it
(a remote shell's background job, ssh's ProxyCommand) held the agent's pipes open, and closing waited for that
child's end (the sleep's 600 s here) in a reader thread's join and in closing the pipe under that reader."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from gpu_train_monitor.remote.client.link import AgentLink, RemoteTimeout
from gpu_train_monitor.remote.client.target import RemoteTarget
from gpu_train_monitor.remote.client.transport import Transport
from tests.support.processes import gone, pid_in

ENDS_WITHIN_S = 5.0


def shell(script: str) -> RemoteTarget:
    return RemoteTarget.parse("gpu-box", transport=("sh", "-c", script))


def agent(store: Path) -> str:
    """The shell words that start the agent serving `store` in place of the shell."""
    return f"exec {sys.executable} -m gpu_train_monitor agent --runs-db {store}"


@pytest.fixture
def leftover():
    """Pids a test started outside the transport's group: killed after the test, whatever it found."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_closing_ends_a_child_the_transport_left_holding_the_pipes(tmp_path: Path) -> None:
    pid_file = tmp_path / "sleep.pid"
    link = AgentLink(shell(f"sleep 600 & echo $! > {pid_file}; {agent(tmp_path / 'remote.sqlite3')}"))
    link.connect()
    sleeper = pid_in(pid_file)
    assert link.ping() > 0
    started = time.monotonic()
    link.close()
    assert time.monotonic() - started < ENDS_WITHIN_S  # not the sleep's 600 s
    assert link.exit_code == 0  # the agent itself ended on its end of input, as ever
    assert gone(sleeper)


def test_a_silent_transport_and_its_children_end_soon_after_the_connect_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "sleep.pid"
    link = AgentLink(shell(f"(sleep 600) & echo $! > {pid_file}; exec sleep 600"), connect_timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(RemoteTimeout):
        link.connect()
    assert time.monotonic() - started < 0.5 + ENDS_WITHIN_S
    assert gone(pid_in(pid_file))
    assert link.exit_code is not None  # the transport itself ended too


@pytest.mark.skipif(shutil.which("setsid") is None, reason="no setsid program (util-linux) here")
def test_a_child_that_left_the_group_does_not_hold_closing_either(tmp_path: Path, leftover: list[int]) -> None:
    """setsid: out of the transport's group, so alive after closing; closing returns all the same and the reader
    it leaves closes its pipe itself when that pipe ends."""
    pid_file = tmp_path / "sleep.pid"
    link = AgentLink(shell(f"setsid sleep 600 & echo $! > {pid_file}; exec sleep 600"), connect_timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(RemoteTimeout):
        link.connect()
    leftover.append(pid_in(pid_file))
    assert time.monotonic() - started < 0.5 + ENDS_WITHIN_S
    os.kill(leftover[0], signal.SIGKILL)  # the pipes' last writer: their readers end
    assert gone(leftover[0])
    deadline = time.monotonic() + 5
    while any(thread.is_alive() for thread in link._threads) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(thread.is_alive() for thread in link._threads)


def test_closing_does_not_wait_for_a_writer_stuck_on_a_frozen_transport(tmp_path: Path) -> None:
    """A request thread blocked writing to a transport that reads nothing holds the input's lock: closing must
    not wait for it, and ending the group unblocks that writer."""
    pid_file = tmp_path / "sleep.pid"
    transport = Transport(shell(f"sleep 600 & echo $! > {pid_file}; exec sleep 600"))
    transport.start()
    sleeper = pid_in(pid_file)
    errors: list[BaseException] = []

    def write_forever() -> None:
        try:
            while True:
                transport.write(b"x" * 65536)
        except (OSError, ValueError) as exc:
            errors.append(exc)

    writer = threading.Thread(target=write_forever, daemon=True)
    writer.start()
    time.sleep(0.5)  # the pipe is full: the writer waits inside the lock
    started = time.monotonic()
    transport.close()
    assert time.monotonic() - started < ENDS_WITHIN_S
    writer.join(ENDS_WITHIN_S)
    assert not writer.is_alive() and errors  # a broken pipe, not a thread blocked for good
    assert transport.returncode is not None and gone(sleeper)
    transport.close_stdout()  # the link's reader would have: none here
