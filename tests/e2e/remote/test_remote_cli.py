"""The CLI's --remote HOST as a user runs it, ssh replaced by a stand-in that runs the remote command here
(tests.support.local_ssh: the client's real ssh command line and agent command reach a local agent serving a
'remote' store of its own): runs list/show/export read that store, `run --remote` and `watch --remote` train
there and leave the same run in the local store, signals steer the remote run, failures are one line."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from gpu_train_monitor.remote.agent.spawn import log_folder
from tests.support.cli import FAST, cli, command, user_error_line
from tests.support.local_ssh import LOCAL_SSH
from tests.support.remote_stores import contents
from tests.support.run_store_support import SHORT, record_run


@pytest.fixture
def remote(tmp_path, monkeypatch):
    """The 'remote' store (on this machine, reached through the ssh stand-in); the options that reach it."""
    store = tmp_path / "remote" / "remote.sqlite3"
    store.parent.mkdir()
    monkeypatch.setenv("GPU_TRAIN_MONITOR_SSH", LOCAL_SSH)
    agent = f"{sys.executable} -m gpu_train_monitor agent --runs-db {store} --allow {tmp_path}"  # scripts: tmp_path
    return store, ["--remote", "alice@gpu-box:2222", "--agent-command", agent]


def env_with_ssh() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1"}


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), capture_output=True, text=True, timeout=timeout, env=env_with_ssh())


def test_runs_list_show_and_export_read_the_remote_store_as_the_local_commands_read_it(remote, tmp_path):
    store, options = remote
    run_id = record_run(store, SHORT)
    listed = run_cli("runs", "list", *options)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout == run_cli("runs", "list", "--runs-db", str(store)).stdout
    facts = json.loads(run_cli("runs", "list", "--json", *options).stdout)
    assert [fact["id"] for fact in facts] == [run_id]
    shown = run_cli("runs", "show", str(run_id), *options)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == run_cli("runs", "show", str(run_id), "--runs-db", str(store)).stdout
    exported = run_cli("runs", "export", str(run_id), "--format", "csv", "--out", str(tmp_path / "there"), *options)
    assert exported.returncode == 0, exported.stderr
    run_cli("runs", "export", str(run_id), "--format", "csv", "--out", str(tmp_path / "here"), "--runs-db", str(store))
    names = sorted(path.name for path in (tmp_path / "there").iterdir())
    assert names == sorted(path.name for path in (tmp_path / "here").iterdir()) and names
    for name in names:
        assert (tmp_path / "there" / name).read_text() == (tmp_path / "here" / name).read_text()
    missing = run_cli("runs", "show", "99", *options)
    user_error_line(missing, "no run 99 on alice@gpu-box:2222")


def test_run_remote_trains_there_and_leaves_the_same_run_here(remote, tmp_path):
    store, options = remote
    local = tmp_path / "local.sqlite3"
    uid = uuid.uuid4().hex
    summary = tmp_path / "summary.json"
    result = subprocess.run(
        command("run", *options, *FAST, "--max-steps", "25", "--runs-db", str(local), "--summary-json", str(summary)),
        capture_output=True,
        text=True,
        timeout=180,
        env={**env_with_ssh(), "GPU_TRAIN_MONITOR_RUN_UID": uid},
    )
    assert result.returncode == 0, result.stderr
    assert "status      completed" in result.stdout and "steps       25" in result.stdout
    assert "started on alice@gpu-box:2222" in result.stderr
    assert contents(local, uid) == contents(store, uid)  # the window finds it here by the uid it handed over
    assert json.loads(summary.read_text())["steps"] == 25


def local_steps(path: Path) -> int:
    try:
        db = sqlite3.connect(path)
        try:
            return db.execute("SELECT count(*) FROM steps").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def local_kinds(path: Path) -> list[str]:
    """The kinds of the events copied into the local store so far."""
    try:
        db = sqlite3.connect(path)
        try:
            return [kind for (kind,) in db.execute("SELECT kind FROM events ORDER BY seq")]
        finally:
            db.close()
    except sqlite3.Error:
        return []


def wait_until(done, process: subprocess.Popen, timeout: float = 120) -> None:
    """Until `done()` (the follower mirrors within a second or so; a loaded machine takes longer)."""
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    assert done(), f"not within {timeout} s"


def test_signals_to_run_remote_steer_the_remote_run(remote, tmp_path):
    store, options = remote
    local = tmp_path / "local.sqlite3"
    uid = uuid.uuid4().hex
    process = subprocess.Popen(
        command("run", *options, *FAST, "--max-steps", "100000", "--runs-db", str(local)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**env_with_ssh(), "GPU_TRAIN_MONITOR_RUN_UID": uid},
    )
    try:
        wait_until(lambda: local_steps(local) >= 5, process)
        process.send_signal(signal.SIGUSR2)  # Pause, as the window's launcher sends it
        wait_until(lambda: "RunPaused" in local_kinds(local), process)  # it reached the run, and came back here
        process.send_signal(signal.SIGUSR2)  # Resume
        wait_until(lambda: "RunResumed" in local_kinds(local), process)
        process.send_signal(signal.SIGINT)  # Stop
        stdout, stderr = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "status      stopped" in stdout
    copy = contents(local, uid)
    assert copy == contents(store, uid)
    kinds = [event[3] for event in copy["events"]]
    assert "RunPaused" in kinds and "RunResumed" in kinds


def test_watch_remote_runs_the_script_there(remote, tmp_path):
    store, options = remote
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "train.py").write_text(
        "import torch\n"
        "model = torch.nn.Linear(4, 2)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for _ in range(12):\n"
        "    loss = model(torch.randn(8, 4)).pow(2).mean()\n"
        "    optimizer.zero_grad(); loss.backward(); optimizer.step()\n"
    )
    local = tmp_path / "local.sqlite3"
    uid = uuid.uuid4().hex
    result = subprocess.run(
        command(
            "watch",
            *options,
            "--remote-cwd",
            str(folder),
            "--name",
            "remote script",
            "--runs-db",
            str(local),
            "--",
            "python",
            "train.py",
        ),
        capture_output=True,
        text=True,
        timeout=180,
        env={**env_with_ssh(), "GPU_TRAIN_MONITOR_RUN_UID": uid},
    )
    assert result.returncode == 0, result.stderr
    copy = contents(local, uid)
    assert len(copy["steps"]) == 12 and copy == contents(store, uid)


def test_failures_are_one_line_and_exit_2(remote, tmp_path):
    _, options = remote
    missing = run_cli("runs", "list", "--remote", "gpu-box", "--agent-command", "no-such-program agent")
    user_error_line(missing, "gpu-train-monitor is not installed on gpu-box", "--agent-command")
    refused = run_cli("run", *options, *FAST, "--resume", "x.pt")
    user_error_line(refused, "--resume", "not with --remote")
    not_python = run_cli("watch", *options, "--", "bash", "train.sh")
    user_error_line(not_python, "python SCRIPT")
    failed_there = run_cli(
        "run", *options, *FAST, "--device", "mps", "--max-steps", "5", "--runs-db", str(tmp_path / "l.db")
    )
    user_error_line(failed_there, "the run on alice@gpu-box:2222 ended before it recorded anything", "mps")
    bad_host = run_cli("runs", "list", "--remote=-oProxyCommand=x")
    user_error_line(bad_host, "not a machine to connect to")


def test_an_unknown_host_through_the_real_ssh_is_one_line(monkeypatch):
    monkeypatch.delenv("GPU_TRAIN_MONITOR_SSH", raising=False)
    result = cli("runs", "list", "--remote", "nobody@no-such-host.invalid", timeout=60)
    user_error_line(result, "unknown host nobody@no-such-host.invalid")


def test_a_stop_before_the_run_has_recorded_itself_still_stops_it(remote, tmp_path):
    store, options = remote
    uid = uuid.uuid4().hex
    process = subprocess.Popen(
        command("run", *options, *FAST, "--max-steps", "100000", "--runs-db", str(tmp_path / "local.sqlite3")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**env_with_ssh(), "GPU_TRAIN_MONITOR_RUN_UID": uid},
    )
    try:
        launched = log_folder(store) / f"{uid}.json"
        deadline = time.monotonic() + 60
        while not launched.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert launched.exists()
        process.send_signal(signal.SIGINT)  # the window's Stop while the run still imports torch
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert contents(store, uid)["run"][0][protocol_status_index()] == "stopped"


def protocol_status_index() -> int:
    from gpu_train_monitor.remote.wire.protocol import RUN_COLUMNS

    return RUN_COLUMNS.index("status")
