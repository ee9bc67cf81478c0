"""The remote machine over a real OpenSSH server on localhost (tests/support/sshd.py): the agent reached
through `ssh -F <temp config> ALIAS`, exactly the command line a user's ssh runs, with a remote store of its
own. What a user sees: the remote's devices, its recorded runs listed from here, a run started there mirrored
here step by step, and each way the connection can fail as one line and exit 2, in seconds.

Skipped, saying why, where sshd or ssh-keygen is not installed (CI installs openssh-server where it can).
"""

from __future__ import annotations

import contextlib
import socket
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.support.cli import FAST, command, user_error_line
from tests.support.processes import ENV, WAIT_S
from tests.support.sshd import SshServer, skip_reason, ssh_server

FAILS_WITHIN_S = 10.0  # a failure is reported in seconds, never a hang


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[SshServer]:
    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason)
    with ssh_server(tmp_path / "sshd") as server:
        yield server


def remote_cli(
    server: SshServer,
    *args: str,
    agent: tuple[str, ...] | None = None,
    local_store: Path | None = None,
    timeout: float = WAIT_S,
) -> subprocess.CompletedProcess[str]:
    """`gpu-train-monitor ARGS --agent-command ...` with this server's ssh config, as a process; `local_store`:
    the default store on this side (GPU_TRAIN_MONITOR_RUNS_DB)."""
    agent_words = agent if agent is not None else server.agent_command()
    argv = [*command(*args), "--agent-command", subprocess.list2cmdline(agent_words)]
    env = server.env(ENV) | ({"GPU_TRAIN_MONITOR_RUNS_DB": str(local_store)} if local_store else {})
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)


def record_run(store: Path) -> None:
    """A finished run recorded into `store` by a local process (the remote's history)."""
    done = subprocess.run(
        command("run", *FAST, "--max-steps", "3", "--runs-db", str(store)),
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        env=ENV,
    )
    assert done.returncode == 0, done.stderr


def rows(store: Path, sql: str, *params: object) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(store)) as db:
        return db.execute(sql, params).fetchall()


def mirrored_steps(store: Path) -> int:
    """Steps in `store` so far; 0 while it is not there yet or is being created (no tables yet)."""
    try:
        return rows(store, "SELECT count(*) FROM steps")[0][0] if store.exists() else 0
    except sqlite3.OperationalError:
        return 0


def test_the_fixture_logs_in_with_its_key_and_only_with_it(sshd: SshServer) -> None:
    said = sshd.ssh("echo", "hi")
    assert (said.returncode, said.stdout) == (0, "hi\n"), said.stderr + sshd.server_log()
    refused = sshd.ssh("true", alias=sshd.wrong_key_alias)
    assert refused.returncode == 255 and "Permission denied" in refused.stderr


def test_the_agent_over_ssh_says_hello_and_lists_the_remote_devices(sshd: SshServer, monkeypatch) -> None:  # noqa: ANN001
    from gpu_train_monitor.remote.client.link import AgentLink
    from gpu_train_monitor.remote.client.target import RemoteTarget

    monkeypatch.setenv("GPU_TRAIN_MONITOR_SSH", sshd.ssh_program)
    with AgentLink(RemoteTarget.parse(sshd.alias, agent_command=sshd.agent_command())) as link:
        hello = link.connect()
        assert hello["host"] == socket.gethostname() == link.host_name
        assert Path(hello["store"]) == sshd.remote_store
        devices = link.request("devices", timeout_s=120)["devices"]  # the agent imports torch on first use
        assert "cpu" in [device["spec"] for device in devices]
        assert 0 <= link.ping() < 5


def test_runs_list_and_show_remote_read_the_remote_store(sshd: SshServer, tmp_path: Path) -> None:
    record_run(sshd.remote_store)
    (uid,) = rows(sshd.remote_store, "SELECT uid FROM runs")[0]
    local = tmp_path / "local.sqlite3"

    listed = remote_cli(sshd, "runs", "list", "--remote", sshd.alias, local_store=local)
    shown = remote_cli(sshd, "runs", "show", "1", "--remote", sshd.alias, local_store=local)

    assert listed.returncode == 0, listed.stderr
    there = subprocess.run(
        command("runs", "list", "--runs-db", str(sshd.remote_store)), capture_output=True, text=True, env=ENV
    )
    assert listed.stdout == there.stdout and "completed" in listed.stdout  # as a terminal on that machine shows it
    assert shown.returncode == 0, shown.stderr
    assert uid in shown.stdout and "steps       3 of 3" in shown.stdout
    assert not local.exists() or not rows(local, "SELECT uid FROM runs")  # reading copies nothing here


def test_run_remote_trains_there_and_mirrors_every_step_here(sshd: SshServer, tmp_path: Path) -> None:
    local = tmp_path / "local.sqlite3"

    done = remote_cli(sshd, "run", "--remote", sshd.alias, *FAST, "--max-steps", "12", "--runs-db", str(local))

    assert done.returncode == 0, done.stderr
    (uid, host, status), *others = rows(sshd.remote_store, "SELECT uid, host, status FROM runs")
    assert not others and status == "completed"
    mirrored = rows(local, "SELECT uid, host, status FROM runs")
    assert mirrored == [(uid, host, "completed")]
    remote_steps = rows(sshd.remote_store, "SELECT step, loss FROM steps ORDER BY step")
    local_steps = rows(local, "SELECT step, loss FROM steps ORDER BY step")
    assert [step for step, _ in remote_steps] == list(range(1, 13))
    assert local_steps == remote_steps
    assert rows(local, "SELECT count(*) FROM reports") == rows(sshd.remote_store, "SELECT count(*) FROM reports")


def test_a_connection_cut_mid_run_is_made_again_and_no_step_is_lost(sshd: SshServer, tmp_path: Path) -> None:
    """The ssh client killed while the run trains (a laptop's Wi-Fi gone): the command says so, connects again
    and fetches what it missed; the run went on there and every step arrives here."""
    local = tmp_path / "local.sqlite3"
    argv = [*command("run", "--remote", sshd.alias, *FAST, "--max-steps", "24", "--runs-db", str(local))]
    argv += ["--agent-command", subprocess.list2cmdline(sshd.agent_command())]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=sshd.env(ENV))
    try:
        deadline = time.monotonic() + WAIT_S
        while mirrored_steps(local) < 3:
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()[1]
            time.sleep(0.1)
        clients = [p for p in psutil.Process(process.pid).children(recursive=True) if p.name() == "ssh"]
        assert clients
        for client in clients:
            client.kill()
        _, stderr = process.communicate(timeout=WAIT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()

    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert "the connection to gtm-sshd was lost" in stderr and "reconnecting" in stderr
    remote_steps = rows(sshd.remote_store, "SELECT step, loss FROM steps ORDER BY step")
    assert [step for step, _ in remote_steps] == list(range(1, 25))
    assert rows(local, "SELECT step, loss FROM steps ORDER BY step") == remote_steps
    assert rows(local, "SELECT status FROM runs") == [("completed",)]


def failure(server: SshServer, host: str, agent: tuple[str, ...] | None = None) -> tuple[str, float]:
    started = time.monotonic()
    result = remote_cli(server, "runs", "list", "--remote", host, agent=agent, timeout=60)
    return user_error_line(result), time.monotonic() - started


def test_a_key_the_server_refuses_is_one_line_about_logging_in(sshd: SshServer) -> None:
    line, seconds = failure(sshd, sshd.wrong_key_alias)
    assert "cannot log in to gtm-sshd-wrong-key" in line and "Permission denied" in line
    assert seconds < FAILS_WITHIN_S


def test_a_host_key_not_in_known_hosts_is_one_line_saying_to_check_it_once(sshd: SshServer) -> None:
    line, seconds = failure(sshd, sshd.untrusted_alias)
    assert "the host key of gtm-sshd-untrusted is not trusted yet" in line
    assert seconds < FAILS_WITHIN_S


def test_an_unknown_host_is_one_line_naming_it(sshd: SshServer) -> None:
    line, seconds = failure(sshd, "gtm-no-such-host.invalid")  # .invalid never resolves (RFC 6761)
    assert "unknown host gtm-no-such-host.invalid" in line
    assert seconds < FAILS_WITHIN_S


@pytest.mark.parametrize(
    "agent",
    [("gpu-train-monitor-not-installed", "agent"), ("/nowhere/bin/gpu-train-monitor", "agent")],
    ids=["not-on-path", "no-such-file"],
)
def test_a_missing_agent_on_the_remote_is_one_line_saying_what_to_install(sshd: SshServer, agent) -> None:  # noqa: ANN001
    line, seconds = failure(sshd, sshd.alias, agent)
    assert "gpu-train-monitor is not installed on gtm-sshd" in line and "--agent-command" in line
    assert seconds < FAILS_WITHIN_S
