"""The client as a user runs it ends when told to, whatever the transport's children do: ssh replaced by the
stand-in that runs the remote command here (tests.support.local_ssh), whose remote shell leaves a child behind
holding the agent's pipes. Before, `runs list --remote` waited for that child (600 s) after listing, and Ctrl+C
or SIGTERM during a connect to a silent agent waited as long."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.support.cli import command
from tests.support.local_ssh import LOCAL_SSH
from tests.support.processes import gone, pid_in

ENDS_WITHIN_S = 5.0


def env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "GPU_TRAIN_MONITOR_SSH": LOCAL_SSH}


def kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def test_runs_list_ends_at_once_though_the_remote_shell_left_a_child_holding_its_output(tmp_path: Path) -> None:
    pid_file = tmp_path / "sleep.pid"
    agent = (
        f"sh -c 'sleep 600 & echo $! > {pid_file}; exec {sys.executable} -m gpu_train_monitor agent "
        f"--runs-db {tmp_path / 'remote.sqlite3'}'"
    )
    try:
        listed = subprocess.run(
            command("runs", "list", "--remote", "localhost", "--agent-command", agent),
            capture_output=True,
            text=True,
            timeout=120,  # the agent's start; before, the listing then waited for the sleep's 600 s
            env=env(),
        )
        assert listed.returncode == 0, listed.stderr
        assert "no runs yet on localhost" in listed.stdout
        assert gone(pid_in(pid_file))
    finally:
        if pid_file.exists() and pid_file.read_text().strip():
            kill(int(pid_file.read_text()))


@pytest.mark.parametrize(("number", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_while_a_silent_agent_is_awaited_ends_the_client_and_its_transport(
    tmp_path: Path, number: int, code: int
) -> None:
    pid_file = tmp_path / "sleep.pid"
    silent = f"sh -c '(sleep 600) & echo $! > {pid_file}; sleep 600'"  # never says hello; its child holds the pipes
    process = subprocess.Popen(
        command("runs", "list", "--remote", "localhost", "--agent-command", silent),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )
    sleeper = None
    try:
        sleeper = pid_in(pid_file, process)
        transport = psutil.Process(process.pid).children(recursive=True)
        assert transport, "the transport was not started"
        started = time.monotonic()
        process.send_signal(number)
        _, stderr = process.communicate(timeout=60)
        assert time.monotonic() - started < ENDS_WITHIN_S, stderr
        assert process.returncode == code, stderr
        assert "Traceback" not in stderr
        assert gone(sleeper) and all(gone(child.pid) for child in transport)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        if sleeper is not None:
            kill(sleeper)
