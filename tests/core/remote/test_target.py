"""What HOST a user may type, and the ssh command line the client runs for it."""

from __future__ import annotations

import os
import subprocess

import pytest

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.remote.client.target import ENV_SSH, RemoteTarget

SSH_OPTIONS = ["-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5"]


@pytest.fixture(autouse=True)
def _plain_ssh(monkeypatch):
    monkeypatch.delenv(ENV_SSH, raising=False)


@pytest.mark.parametrize(
    ("text", "destination", "port"),
    [
        ("gpu-box", "gpu-box", None),
        ("  gpu-box ", "gpu-box", None),
        ("alice@gpu.example.org", "alice@gpu.example.org", None),
        ("alice@10.0.0.7:2222", "alice@10.0.0.7", 2222),
        ("gpu-box:22", "gpu-box", 22),
        ("bob@[::1]:2200", "bob@::1", 2200),
        ("[fe80::1]", "fe80::1", None),
    ],
)
def test_the_forms_ssh_takes_become_a_destination_and_a_port(text, destination, port):
    target = RemoteTarget.parse(text)
    assert (target.destination, target.port) == (destination, port)
    argv = target.argv()
    assert argv[0] == "ssh"
    assert argv[1 : 1 + len(SSH_OPTIONS)] == SSH_OPTIONS
    assert "ServerAliveCountMax=3" in argv
    tail = ["--", destination, "gpu-train-monitor", "agent"]  # "--": the destination is never an option
    assert argv[-4:] == tail
    assert (argv[-6:-4] == ["-p", str(port)]) if port else "-p" not in argv


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "-oProxyCommand=touch /tmp/x",
        "gpu box",
        "alice@",
        "host:0",
        "host:99999",
        "host:ssh",
        "a;b",
        "box:\u00b2",  # '²': str.isdigit() says yes, int() says no (a traceback before)
        "box:\u0663",  # Arabic-Indic three: int() reads it as port 3
        "box:\uff12\uff12",  # fullwidth 22
        "box:000022",
    ],
)
def test_a_host_ssh_would_misread_is_one_clear_error(text):
    with pytest.raises(UserError) as error:
        RemoteTarget.parse(text)
    message = str(error.value)
    assert "\n" not in message
    assert "user@host" in message or "port" in message


def test_the_agent_command_is_configurable_and_reaches_the_remote_shell_as_typed():
    target = RemoteTarget.parse(
        "gpu-box", agent_command="'~/my venv/bin/gpu-train-monitor' agent --runs-db '/data/a b.db' 'x;y'"
    )
    words = target.argv()[target.argv().index("gpu-box") + 1 :]
    # ssh joins its words with spaces and the remote shell splits them again: run that shell here
    expanded = subprocess.run(
        ["sh", "-c", "printf '%s\\n' " + " ".join(words)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "HOME": "/home/alice"},
    )
    assert expanded.stdout.splitlines() == [
        "/home/alice/my venv/bin/gpu-train-monitor",  # ~/ expanded there, the space kept
        "agent",
        "--runs-db",
        "/data/a b.db",
        "x;y",  # a word, never a second command
    ]


def test_an_unreadable_or_empty_agent_command_is_refused():
    with pytest.raises(UserError, match="cannot be read"):
        RemoteTarget.parse("gpu-box", agent_command="'unclosed")
    with pytest.raises(UserError, match="empty"):
        RemoteTarget.parse("gpu-box", agent_command="  ")


def test_the_ssh_program_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(ENV_SSH, "/usr/bin/ssh -F '/tmp/test config'")
    argv = RemoteTarget.parse("alice@box:2022").argv()
    assert argv[:3] == ["/usr/bin/ssh", "-F", "/tmp/test config"]
    assert argv[-6:] == ["-p", "2022", "--", "alice@box", "gpu-train-monitor", "agent"]


def test_a_transport_replaces_ssh_entirely(monkeypatch):
    monkeypatch.setenv(ENV_SSH, "never-used")
    target = RemoteTarget.parse("gpu-box", transport=("python", "-m", "gpu_train_monitor", "agent"))
    assert target.argv() == ["python", "-m", "gpu_train_monitor", "agent"]
    assert target.host == "gpu-box"
