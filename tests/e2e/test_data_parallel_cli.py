"""Data-parallel runs on the CPU: 2 gloo processes started by `run --nproc 2` (torch.distributed's elastic
launcher), recorded in a store of the test's own. What a user sees: the same losses as one process when
BatchNorm is synchronised, every rank in the record and the summary, a killed or hung rank named, Stop
reaching every rank, and no process left behind."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.store.run_store import RunStore, StoreError

ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
TINY = ["--device", "cpu", "--model", "tiny-cnn", "--synthetic-samples", "512", "--batch-size", "64"]


def cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpu_train_monitor", "run", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=timeout,
    )


def start(*args: str, tmp: Path | None = None) -> subprocess.Popen[str]:
    """The CLI as a process; `tmp` as its temporary folder (to see what it leaves there)."""
    env = ENV if tmp is None else {**ENV, "TMPDIR": str(tmp)}
    return subprocess.Popen(
        [sys.executable, "-m", "gpu_train_monitor", "run", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


def said(err: str) -> list[str]:
    """What the run said on stderr, beside its progress bar, its opening line and where it recorded the run."""
    lines = [line.strip() for line in err.replace("\r", "\n").splitlines() if line.strip()]
    return [line for line in lines if not line.startswith(("training ", "recorded as run ")) and "%|" not in line]


def left_in(tmp: Path) -> list[str]:
    """What a run left in its temporary folder, beside torch's compile cache (kept across runs by design)."""
    return [path.name for path in tmp.iterdir() if not path.name.startswith("torchinductor_")]


def private_tmp(tmp_path: Path) -> Path:
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


def end(process: subprocess.Popen[str]) -> None:
    """After a failed assertion: nothing of the run survives the test."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()


def wait_for_live_ranks(path: Path, process: subprocess.Popen[str], reports: int = 3) -> int:
    """The run's id once both ranks have reported a few times (the run is under way on both)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[1]
        try:
            with RunStore(path, readonly=True) as store:
                runs = store.list_runs()
                if runs and len({r.step for r in store.rank_reports(runs[0].id)}) >= reports:
                    return runs[0].id
        except StoreError:  # not there yet, or still being created by rank 0
            pass
        time.sleep(0.2)
    raise AssertionError("the data-parallel run never reported from both ranks")


def rank_pids(launcher: psutil.Process, store: Path, run_id: int) -> dict[int, int]:
    """rank -> pid of the 2 workers: the recorded pid is rank 0; the other worker the launcher spawned is rank 1
    (a spawned worker's environment as /proc shows it predates the RANK the launcher sets in it)."""
    with RunStore(store, readonly=True) as runs:
        rank0 = runs.run(run_id).pid
    workers = [c.pid for c in launcher.children(recursive=True) if "spawn_main" in " ".join(c.cmdline())]
    assert rank0 in workers and len(workers) == 2, workers
    return {0: rank0, 1: next(pid for pid in workers if pid != rank0)}


def assert_all_gone(processes: list[psutil.Process]) -> None:
    gone, alive = psutil.wait_procs(processes, timeout=30)
    assert not alive, f"processes left behind: {alive}"


def test_two_processes_with_synchronised_batchnorm_train_the_one_process_losses(tmp_path: Path) -> None:
    steps = 12
    one = TrainingSession(
        RunConfig(
            device="cpu",
            model="tiny-cnn",
            synthetic_samples=512,
            batch_size=64,
            max_steps=steps,
            placement="stream",
            report_interval=0.01,
        )
    )
    losses: list[float] = []
    one.observers.append(lambda e: losses.extend(getattr(e, "losses", ())))
    assert one.run().status == "completed"
    store = tmp_path / "runs.sqlite3"
    for sync in ("--sync-bn", "--no-sync-bn"):
        result = cli(
            *TINY, "--placement", "stream", "--max-steps", str(steps), "--nproc", "2", sync, "--runs-db", str(store)
        )
        assert result.returncode == 0, result.stderr
    with RunStore(store) as runs:
        synced, unsynced = (runs.steps(run.id).losses for run in sorted(runs.list_runs(), key=lambda r: r.id))
    assert len(synced) == len(unsynced) == len(losses) == steps
    assert max(abs(a - b) / a for a, b in zip(losses, synced)) < 1e-4  # the same batches, the same statistics
    worst = max(abs(a - b) / a for a, b in zip(losses, unsynced))
    assert 1e-4 < worst < 0.1  # per-rank statistics: close, not equal


def test_every_rank_reaches_the_record_and_the_summary(tmp_path: Path) -> None:
    store, summary = tmp_path / "runs.sqlite3", tmp_path / "summary.json"
    result = cli(*TINY, "--max-steps", "24", "--nproc", "2", "--runs-db", str(store), "--summary-json", str(summary))
    assert result.returncode == 0, result.stderr
    assert "2 processes (data-parallel)" in result.stdout
    data = json.loads(summary.read_text())
    assert data["world_size"] == 2 and data["status"] == "completed" and data["samples"] == 24 * 64
    assert [r["rank"] for r in data["ranks"]] == [0, 1]
    for rank in data["ranks"]:
        assert rank["device"] == "cpu" and rank["peak_rss_bytes"] > 0 and rank["samples_per_s"] > 0
    total = sum(r["samples_per_s"] for r in data["ranks"])
    assert data["samples_per_s"] == pytest.approx(total, rel=0.35)  # the run's images/s is the ranks' total
    with RunStore(store) as runs:
        run = runs.list_runs()[0]
        assert (run.world_size, run.status, run.steps) == (2, "completed", 24)
        samples = runs.rank_reports(run.id)
        assert {s.rank for s in samples} == {0, 1}
        assert {s.step for s in samples if s.rank == 0} == {s.step for s in samples if s.rank == 1}
        breakdowns = runs.events(run.id, kinds=("MemoryBreakdown",))
        assert {b.data["rank"] for b in breakdowns} == {0, 1}
        assert runs.steps(run.id).steps == tuple(range(1, 25))
        assert all(math.isfinite(loss) for loss in runs.steps(run.id).losses)


def test_a_killed_rank_ends_the_run_named_and_leaves_no_process(tmp_path: Path) -> None:
    """One line, the true one (not rank 0's lost connection, torch's warnings, a traceback, leaked semaphores),
    and nothing left in the temporary folder (torch's launcher made a torchelastic_* folder per run)."""
    store, tmp = tmp_path / "runs.sqlite3", private_tmp(tmp_path)
    process = start(*TINY, "--max-steps", "100000", "--nproc", "2", "--runs-db", str(store), tmp=tmp)
    launcher = psutil.Process(process.pid)
    try:
        run_id = wait_for_live_ranks(store, process)
        pids = rank_pids(launcher, store, run_id)
        family = launcher.children(recursive=True)
        os.kill(pids[1], signal.SIGKILL)
        _, err = process.communicate(timeout=60)
    finally:
        end(process)
    assert process.returncode == 1
    # torch's launcher reports the first failed process it notices: the killed rank with its signal, or (under
    # load) only the survivor's lost connection, and then the rank that vanished is named without its signal
    named = (
        f"rank 1 (pid {pids[1]}) was killed by SIGKILL",
        "rank 1 ended without a word (killed, or its process crashed), and the others lost their connection to it",
    )
    assert said(err) in ([f"gpu-train-monitor: failed: {line}"] for line in named), err
    assert_all_gone(family)
    assert left_in(tmp) == []
    with RunStore(store) as runs:
        run = runs.run(run_id)
    assert run.status == "failed" and any(line in run.message for line in named), run.message


def test_stop_sent_to_rank_0_stops_every_rank(tmp_path: Path) -> None:
    """The window's Stop (and a script's kill -INT of the recorded pid): every rank ends at the same step."""
    store = tmp_path / "runs.sqlite3"
    process = start(*TINY, "--max-steps", "100000", "--nproc", "2", "--runs-db", str(store))
    launcher = psutil.Process(process.pid)
    try:
        run_id = wait_for_live_ranks(store, process)
        rank0 = rank_pids(launcher, store, run_id)[0]
        family = launcher.children(recursive=True)
        os.kill(rank0, signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        end(process)
    assert process.returncode == 130, err
    assert "status      stopped" in out
    assert_all_gone(family)
    with RunStore(store) as runs:
        run = runs.run(run_id)
        assert run.status == "stopped"
        last = max(s.step for s in runs.rank_reports(run_id))
        assert last == run.steps  # both ranks' last report is the step the run stopped at


def test_a_hung_rank_ends_the_run_within_the_timeout(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    process = start(*TINY, "--max-steps", "100000", "--nproc", "2", "--dist-timeout", "4", "--runs-db", str(store))
    launcher = psutil.Process(process.pid)
    try:
        run_id = wait_for_live_ranks(store, process)
        pids = rank_pids(launcher, store, run_id)
        family = launcher.children(recursive=True)
        os.kill(pids[1], signal.SIGSTOP)  # alive but never answers: a hung collective
        stopped_at = time.monotonic()
        _, err = process.communicate(timeout=90)
        took = time.monotonic() - stopped_at
    finally:
        end(process)
    assert process.returncode == 1
    assert "rank 1 stopped responding" in err, err
    assert took < 4 + 15 + 10  # the timeout, the others' grace (15 s, as the README says), slack for a busy machine
    assert_all_gone(family)


def test_sigterm_to_the_launcher_returns_once_the_ranks_have_stopped(tmp_path: Path) -> None:
    """The ranks stop at a step within a moment; the launcher must not hold them until its grace (15 s) ends."""
    from gpu_train_monitor.distributed.launcher import SHUTDOWN_TIMEOUT_S

    store, tmp = tmp_path / "runs.sqlite3", private_tmp(tmp_path)
    process = start(*TINY, "--max-steps", "100000", "--nproc", "2", "--runs-db", str(store), tmp=tmp)
    launcher = psutil.Process(process.pid)
    try:
        run_id = wait_for_live_ranks(store, process)
        family = launcher.children(recursive=True)
        os.kill(process.pid, signal.SIGTERM)
        sent = time.monotonic()
        out, err = process.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        end(process)
    assert process.returncode == 143, err
    assert took < SHUTDOWN_TIMEOUT_S, f"{took:.1f} s"
    assert said(err) == ["gpu-train-monitor: stopped: stopped by request"], err
    assert "status      stopped" in out
    assert_all_gone(family)
    assert left_in(tmp) == []
    with RunStore(store) as runs:
        assert runs.run(run_id).status == "stopped"


def test_more_processes_than_cores_is_a_clear_error() -> None:
    n = (os.cpu_count() or 1) + 1
    result = cli(*TINY, "--max-steps", "2", "--nproc", str(n), "--batch-size", str(64 * n), timeout=60)
    assert result.returncode == 2
    assert f"{n} CPU processes on {os.cpu_count()} CPU cores" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"nproc": 3, "batch_size": 64}, "batch_size", "does not split evenly over 3 processes"),
        ({"nproc": 2, "device": "cuda:1"}, "device", "each take their own"),
        ({"nproc": 2, "on_oom": "shrink"}, "on_oom", "shrink is for one process"),
    ],
)
def test_settings_a_data_parallel_run_cannot_take_are_refused(changes: dict, field: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as caught:
        RunConfig(**changes)
    assert caught.value.field == field


def test_options_for_one_process_are_refused_before_any_rank_starts(tmp_path: Path) -> None:
    result = cli(*TINY, "--nproc", "2", "--checkpoint-every", "5", timeout=60)
    assert result.returncode == 2 and "save no checkpoints" in result.stderr


def test_compare_races_one_process_against_two_and_states_the_scaling(tmp_path: Path) -> None:
    out = tmp_path / "compare.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpu_train_monitor",
            "compare",
            "--vs",
            "nproc=1",
            "--vs",
            "nproc=2",
            *TINY,
            "--max-steps",
            "12",
            "--json",
            str(out),
            "--no-record",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    assert [r["status"] for r in data["runs"]] == ["completed", "completed"]
    efficiency = data["scaling_efficiency"]["1"]
    rates = [r["samples_per_s"] for r in data["runs"]]
    assert efficiency == pytest.approx(rates[1] / (2 * rates[0]))
    assert f"scaling efficiency nproc=2 {efficiency:.0%}" in result.stdout


def test_ctrl_c_in_the_terminal_stops_every_rank_once(tmp_path: Path) -> None:
    """The terminal's SIGINT reaches the launcher and every rank, and the launcher passes it on again: a
    rank takes the repeat as the same stop, not as an abort."""
    store = tmp_path / "runs.sqlite3"
    process = start(*TINY, "--max-steps", "100000", "--nproc", "2", "--runs-db", str(store))
    launcher = psutil.Process(process.pid)
    try:
        run_id = wait_for_live_ranks(store, process)
        family = launcher.children(recursive=True)
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl+C does: the whole foreground process group
        out, err = process.communicate(timeout=60)
    finally:
        end(process)
    assert process.returncode == 130, err
    assert "status      stopped" in out and "Traceback" not in err and "failed" not in err
    assert_all_gone(family)
    with RunStore(store) as runs:
        assert runs.run(run_id).status == "stopped"


def test_a_missing_dataset_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = cli(
        "--device",
        "cpu",
        "--model",
        "tiny-cnn",
        "--dataset",
        "cifar10",
        "--data-dir",
        str(tmp_path),
        "--batch-size",
        "64",
        "--max-steps",
        "2",
        "--nproc",
        "2",
        "--no-record",
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line or "failed" in line]
    assert len(errors) == 1 and "cifar" in errors[0].lower() and "Traceback" not in result.stderr


def test_a_launcher_started_by_a_window_stops_its_ranks_when_the_window_is_killed(tmp_path: Path) -> None:
    """kill -9 of the window gives it no chance to stop anything: the launcher notices (Linux's parent-death
    signal) and stops its ranks as for any SIGTERM."""
    store = tmp_path / "runs.sqlite3"
    args = [
        sys.executable,
        "-m",
        "gpu_train_monitor",
        "run",
        *TINY,
        "--max-steps",
        "100000",
        "--nproc",
        "2",
        "--runs-db",
        str(store),
    ]
    window = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import os, subprocess, sys, time\n"
                "env = dict(os.environ, GPU_TRAIN_MONITOR_STOP_WITH_PID=str(os.getpid()))\n"
                f"launcher = subprocess.Popen({args!r}, env=env, stdout=subprocess.DEVNULL,"
                " stderr=subprocess.DEVNULL)\n"
                "print(launcher.pid, flush=True)\n"
                "time.sleep(600)\n"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=ENV,
        start_new_session=True,
    )
    try:
        assert window.stdout is not None
        launcher = psutil.Process(int(window.stdout.readline()))
        run_id = wait_for_live_ranks(store, window)  # type: ignore[arg-type]
        family = [launcher, *launcher.children(recursive=True)]
        window.kill()
        window.wait()
        assert_all_gone(family)
    finally:
        end(window)  # type: ignore[arg-type]
        if window.stdout is not None:
            window.stdout.close()
    with RunStore(store) as runs:
        assert runs.run(run_id).status == "stopped"


def test_torchrun_starts_the_same_run_and_rank_0_records_it(tmp_path: Path) -> None:
    """A cluster user's command on one machine: the ranks read torchrun's environment; rank 0 alone records."""
    store, summary = tmp_path / "runs.sqlite3", tmp_path / "summary.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            "2",
            "-m",
            "gpu_train_monitor",
            "run",
            *TINY,
            "--max-steps",
            "10",
            "--runs-db",
            str(store),
            "--summary-json",
            str(summary),
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(summary.read_text())["world_size"] == 2
    assert result.stdout.count("status      completed") == 1  # rank 0 prints; rank 1 is quiet
    with RunStore(store) as runs:
        (run,) = runs.list_runs()
        assert (run.world_size, run.status, run.steps) == (2, "completed", 10)
        assert {s.rank for s in runs.rank_reports(run.id)} == {0, 1}
