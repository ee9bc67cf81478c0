"""`compare --remote HOST` and `find-batch-size --remote HOST` as a user runs them, ssh replaced by a stand-in that
runs the agent command here on a "remote" store of its own (tests.support.local_ssh): the same output and exit
codes as the local commands, the comparison's runs recorded here under their uids there, what the remote refuses
one line and exit 2, Ctrl+C stops the comparison there; and a comparison followed through dropped connections
loses nothing and repeats nothing."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

import psutil
import pytest

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.remote.client.jobs import RemoteComparison
from gpu_train_monitor.remote.client.reconnecting import RECONNECTING
from gpu_train_monitor.store.recorder import recording
from gpu_train_monitor.store.run_store import RunStore, StoreError
from tests.support.cli import FAST, command, user_error_line
from tests.support.local_ssh import LOCAL_SSH
from tests.support.remote_stores import kill_processes_mentioning, local_agent

SHORT = [*FAST, "--batch-size", "8", "--max-steps", "12"]


@pytest.fixture
def remote(tmp_path, monkeypatch):
    store = tmp_path / "remote" / "remote.sqlite3"
    store.parent.mkdir()
    monkeypatch.setenv("GPU_TRAIN_MONITOR_SSH", LOCAL_SSH)
    agent = f"{sys.executable} -m gpu_train_monitor agent --runs-db {store}"
    yield store, ["--remote", "alice@gpu-box", "--agent-command", agent]
    kill_processes_mentioning(store.parent)  # a job left there by a failed test: it was detached


def run_cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), capture_output=True, text=True, timeout=timeout)


def test_compare_remote_prints_the_local_table_and_records_the_runs_here(remote, tmp_path):
    store, options = remote
    local = tmp_path / "local.sqlite3"
    vs = ["--vs", "batch_size=8", "--vs", "batch_size=16"]
    result = run_cli("compare", *options, *SHORT, *vs, "--runs-db", str(local))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["#", "configuration", "images/s"]
    assert lines[1].split()[:2] == ["1", "batch_size=8"] and lines[2].split()[:2] == ["2", "batch_size=16"]
    assert lines[1].split()[-1] == "completed" and lines[2].split()[-1] == "completed"
    # the headline: a ratio, or (on a machine fast enough to train a run within its warm-up report) why there is none
    said = ("faster than", "within the noise", "differ", "too few for a rate")
    assert any(words in lines[3] for words in said), lines[3]
    assert "comparing 2 configurations" in result.stderr and f"recorded as run 1, 2 in {local}" in result.stderr
    with RunStore(store, readonly=True) as there, RunStore(local, readonly=True) as here:
        remote_runs = {row.uid: row for row in there.list_runs()}
        local_runs = {row.uid: row for row in here.list_runs()}
        assert set(local_runs) == set(remote_runs) and len(local_runs) == 2
        for uid, row in local_runs.items():
            assert row.host == remote_runs[uid].host and row.label == remote_runs[uid].label
            assert here.steps(row.id).losses == there.steps(remote_runs[uid].id).losses


def test_find_batch_size_remote_prints_the_local_answer(remote):
    _, options = remote
    result = run_cli("find-batch-size", *options, *FAST, "--capacity", "2GB")
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("searching on cpu on alice@gpu-box with tiny-cnn")
    assert "  batch " in result.stderr  # each trial as it was measured there
    batch = int(result.stdout.splitlines()[0].split()[-1])
    assert batch > 0 and result.stdout.splitlines()[1].startswith("predicted peak")


def test_what_the_remote_refuses_is_one_line(remote, tmp_path):
    _, options = remote
    missing = run_cli("compare", *options, *SHORT, "--vs", "device=cpu", "--vs", "device=cuda:7")
    line = user_error_line(missing, "configuration 2", "cuda:7")
    assert "Traceback" not in missing.stderr, line
    nothing = subprocess.run(
        command("compare", "--remote", "alice@gpu-box", "--agent-command", "no-such-agent", *SHORT)
        + ["--vs", "batch_size=8", "--vs", "batch_size=16"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    user_error_line(nothing, "no-such-agent")


def test_ctrl_c_stops_the_comparison_there(remote, tmp_path):
    store, options = remote
    process = subprocess.Popen(
        command("compare", *options, *FAST, "--batch-size", "8", "--max-steps", "100000")
        + ["--vs", "batch_size=8", "--vs", "batch_size=16", "--runs-db", str(tmp_path / "local.sqlite3")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not steps_recorded(store):
            time.sleep(0.2)
        assert steps_recorded(store), "the first run never trained there"
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert "stopped" in stdout.splitlines()[1], stdout
    with RunStore(store, readonly=True) as there:
        assert [row.status for row in there.list_runs()] == ["stopped"]  # the second never started


def steps_recorded(store) -> bool:
    if not store.exists():
        return False
    try:
        with RunStore(store, readonly=True) as runs:
            return any(row.steps > 0 for row in runs.list_runs())
    except StoreError:  # the agent there is still creating it
        return False


def command_line(process: psutil.Process) -> str:
    """A child's command line; '' for one that has just ended (a zombie not yet reaped has none)."""
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def test_a_comparison_followed_through_dropped_connections_arrives_whole_and_once(tmp_path):
    store, local = tmp_path / "remote" / "remote.sqlite3", tmp_path / "local.sqlite3"
    store.parent.mkdir()
    base = RunConfig(device="cpu", model="tiny-cnn", synthetic_samples=256, batch_size=8, max_steps=300)
    comparison = RemoteComparison(local_agent(store), base, [{"batch_size": 8}, {"batch_size": 4}])
    states: list[str] = []
    comparison.on_state = states.append
    outcome: dict[str, object] = {}

    def race() -> None:
        with recording(comparison.observers, local, print):
            outcome["result"] = comparison.run()

    thread = threading.Thread(target=race)
    thread.start()
    drops = 0
    deadline = time.monotonic() + 120
    while thread.is_alive() and not drops and time.monotonic() < deadline:  # one drop, once the first run trains
        time.sleep(0.5)
        # the agent (`gpu_train_monitor agent ...`), not the job it started (`gpu_train_monitor.remote.agent.job`)
        agents = [p for p in psutil.Process().children(recursive=True) if "agent" in command_line(p).split()]
        if agents and steps_recorded(store):
            for agent in agents:
                agent.kill()
            drops += 1
    thread.join(180)
    kill_processes_mentioning(store.parent)  # nothing is left there, even when the race did not end
    assert drops >= 1 and RECONNECTING in states
    result = outcome["result"]
    assert result.status == "completed" and [run.steps for run in result.runs] == [300, 300]
    with RunStore(store, readonly=True) as there, RunStore(local, readonly=True) as here:
        remote_runs = {row.uid: row for row in there.list_runs()}
        local_runs = {row.uid: row for row in here.list_runs()}
        assert set(local_runs) == set(remote_runs) and len(local_runs) == 2
        for uid, row in local_runs.items():
            assert here.steps(row.id).losses == there.steps(remote_runs[uid].id).losses
            assert len(here.events(row.id)) == len(there.events(remote_runs[uid].id))
