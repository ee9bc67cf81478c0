"""Every way a connection fails is one clear line, found out quickly: ssh's own errors (exit 255 and its words),
a remote shell without the agent (127), silence (a timeout), another protocol version, a transport that dies."""

from __future__ import annotations

import json
import shutil
import sys
import threading
import time

import pytest

from gpu_train_monitor.remote.client.link import (
    AgentLink,
    AgentMissing,
    AuthenticationFailed,
    ConnectionLost,
    HostKeyNotTrusted,
    RemoteError,
    RemoteTimeout,
    UnknownHost,
    Unreachable,
    VersionMismatch,
)
from gpu_train_monitor.remote.client.target import ENV_SSH, RemoteTarget
from gpu_train_monitor.remote.wire import protocol


def failing(stderr: str, code: int) -> RemoteTarget:
    """A transport that fails as ssh (or the remote shell) does: `stderr`, then exit `code`."""
    script = f"import sys; sys.stderr.write({stderr + chr(10)!r}); sys.exit({code})"
    return RemoteTarget.parse("gpu-box", transport=(sys.executable, "-c", script))


def connect_error(target: RemoteTarget, timeout_s: float = 10.0) -> RemoteError:
    link = AgentLink(target, connect_timeout_s=timeout_s)
    started = time.monotonic()
    with pytest.raises(RemoteError) as raised:
        link.connect()
    assert time.monotonic() - started < timeout_s + 5
    assert not link.alive
    message = str(raised.value)
    assert "\n" not in message and "Traceback" not in message
    return raised.value


@pytest.mark.parametrize(
    ("stderr", "code", "kind", "words"),
    [
        ("alice@gpu-box: Permission denied (publickey).", 255, AuthenticationFailed, "cannot log in to gpu-box"),
        ("ssh: Could not resolve hostname gpu-box: Name or service not known", 255, UnknownHost, "unknown host"),
        ("Host key verification failed.", 255, HostKeyNotTrusted, "host key of gpu-box"),
        ("ssh: connect to host gpu-box port 22: Connection refused", 255, Unreachable, "Connection refused"),
        ("ssh: connect to host gpu-box port 22: Connection timed out", 255, Unreachable, "cannot reach gpu-box"),
        ("bash: line 1: gpu-train-monitor: command not found", 127, AgentMissing, "--agent-command"),
        ("sh: 1: /opt/venv/bin/gpu-train-monitor: not found", 127, AgentMissing, "not installed on gpu-box"),
        ("zsh: no such file or directory: /opt/venv/bin/gpu-train-monitor", 127, AgentMissing, "pip install"),
        (
            "Traceback (most recent call last):\nModuleNotFoundError: No module named 'torch'",
            1,
            ConnectionLost,
            "No module named",
        ),
    ],
)
def test_how_the_transport_ended_says_what_went_wrong(stderr, code, kind, words):
    error = connect_error(failing(stderr, code))
    assert type(error) is kind
    assert words in str(error)


@pytest.mark.skipif(shutil.which("ssh") is None, reason="no OpenSSH client (ssh) on this machine")
@pytest.mark.parametrize(
    ("host", "kind"), [("nobody@no-such-host.invalid", UnknownHost), ("nobody@127.0.0.1:1", Unreachable)]
)
def test_the_real_ssh_reports_an_unknown_host_and_a_closed_port(host, kind, monkeypatch):
    monkeypatch.delenv(ENV_SSH, raising=False)
    error = connect_error(RemoteTarget.parse(host))
    assert type(error) is kind
    assert host.split("@")[1].split(":")[0] in str(error)


def test_a_missing_ssh_program_is_named(monkeypatch):
    monkeypatch.setenv(ENV_SSH, "/nonexistent/ssh-client")
    error = connect_error(RemoteTarget.parse("gpu-box"))
    assert "cannot run /nonexistent/ssh-client" in str(error)


def test_a_silent_transport_times_out_instead_of_hanging():
    target = RemoteTarget.parse("gpu-box", transport=("sleep", "60"))
    started = time.monotonic()
    error = connect_error(target, timeout_s=0.5)
    assert type(error) is RemoteTimeout
    assert "no answer from gpu-box within 0.5 s" in str(error)
    assert time.monotonic() - started < 5


def agent_saying(*lines: str) -> RemoteTarget:
    """A transport that prints `lines` (a shell's greeting, a hello) and then reads its input as an agent would."""
    code = "import sys\n" + "".join(f"print({line!r}, flush=True)\n" for line in lines) + "sys.stdin.read()\n"
    return RemoteTarget.parse("gpu-box", transport=(sys.executable, "-c", code))


def test_another_protocol_version_names_both_sides():
    hello = json.dumps({"hello": {"protocol": 99, "app": "9.9.9", "host": "gpu-box", "store": "/x", "schema": 4}})
    error = connect_error(agent_saying("Welcome to gpu-box!", hello))  # a login greeting first is skipped
    assert type(error) is VersionMismatch
    assert "9.9.9" in str(error) and "99" in str(error) and str(protocol.PROTOCOL_VERSION) in str(error)
    assert "install the same gpu-train-monitor version on both machines" in str(error)


def test_a_transport_that_dies_after_its_hello_fails_the_handshake_at_once():
    hello = json.dumps({"hello": {"protocol": protocol.PROTOCOL_VERSION, "app": "x", "host": "h", "store": "s"}})
    code = f"print({hello!r}, flush=True); import sys; sys.stdin.readline()"
    error = connect_error(RemoteTarget.parse("gpu-box", transport=(sys.executable, "-c", code)))
    assert type(error) is ConnectionLost
    assert "connection to gpu-box was lost" in str(error)


def test_closing_from_another_thread_ends_a_connect_that_waits():
    link = AgentLink(RemoteTarget.parse("gpu-box", transport=("sleep", "60")), connect_timeout_s=30)
    threading.Timer(0.3, link.close).start()  # a window's Cancel while ssh still waits
    started = time.monotonic()
    with pytest.raises(ConnectionLost, match="was closed"):
        link.connect()
    assert time.monotonic() - started < 5


def test_an_agent_line_nested_too_deeply_is_a_broken_protocol_said_at_once():
    """The parser's recursion limit must not kill the reader thread silently (requests would wait their timeout)."""
    hello = json.dumps({"hello": {"protocol": protocol.PROTOCOL_VERSION, "app": "x", "host": "h", "store": "s"}})
    code = f"print({hello!r}, flush=True); print('[' * 30000 + ']' * 30000, flush=True); import sys; sys.stdin.read()"
    started = time.monotonic()
    error = connect_error(RemoteTarget.parse("gpu-box", transport=(sys.executable, "-c", code)), timeout_s=20.0)
    assert type(error) is ConnectionLost and "broke the protocol" in str(error) and "nested too deeply" in str(error)
    assert time.monotonic() - started < 10  # not the 20 s connect timeout


def test_an_agent_line_naming_a_stream_by_a_list_is_dropped_and_the_link_goes_on():
    hello = json.dumps({"hello": {"protocol": protocol.PROTOCOL_VERSION, "app": "x", "host": "h", "store": "s"}})
    stray = json.dumps({"stream": [1], "data": {}})
    answer = json.dumps({"id": 0, "ok": True, "result": {"protocol": protocol.PROTOCOL_VERSION, "app": "x"}})
    code = (
        f"import sys; print({hello!r}, flush=True); sys.stdin.readline(); print({stray!r}, flush=True); "
        f"print({answer!r}, flush=True); sys.stdin.read()"
    )
    link = AgentLink(RemoteTarget.parse("gpu-box", transport=(sys.executable, "-c", code)), connect_timeout_s=20.0)
    try:
        assert link.connect()["host"] == "h"  # the stray line did not stop the reader before the hello's answer
        assert link.alive
    finally:
        link.close()
