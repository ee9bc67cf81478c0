"""The run store as separate processes see it: a run killed mid-way (SIGKILL) and resumed, a run still training
in another process (listed live, not deleted), and a store that is read-only for the user the CLI runs as.
Each starts the real CLI: what survives a kill, which process is alive, and whose file it is belong to the
process."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpu_train_monitor.base.text import Message
from gpu_train_monitor.cli.main import main
from gpu_train_monitor.store.run_store import INTERRUPTED, RunStore, StoreError
from tests.support.recorded_runs import record_run

CLI_FAST = ["--device", "cpu", "--model", "tiny-cnn", "--synthetic-samples", "256", "--batch-size", "32"]
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
ROOT = Path(__file__).resolve().parents[2]
PREFIX = "gpu-train-monitor: error: "


def runs(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`gpu-train-monitor runs ARGS` in this process (the other process is the run)."""
    code = main(["runs", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error_line(code: int, err: str) -> str:
    """The message of a one-line error with exit code 2 (no traceback, no usage block)."""
    assert code == 2 and err.count("\n") == 1 and err.startswith(PREFIX) and "Traceback" not in err, err
    return err[len(PREFIX) :].strip()


def test_a_run_killed_mid_way_keeps_its_steps_to_the_last_report_and_shows_interrupted(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gpu_train_monitor",
            "run",
            *CLI_FAST,
            "--max-steps",
            "100000",
            "--report-interval",
            "0.05",
            "--runs-db",
            str(path),
            "--checkpoint-every",
            "10",
            "--checkpoint-dir",
            str(tmp_path / "checkpoints"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=ENV,
    )
    try:
        deadline, seen = time.monotonic() + 120, 0
        while seen < 30:  # wait until it has recorded a few reports
            assert process.poll() is None and time.monotonic() < deadline, "the run ended or never recorded"
            time.sleep(0.2)
            if path.exists():
                with RunStore(path, readonly=True) as watcher:
                    runs = watcher.list_runs()
                    if runs:
                        assert runs[0].live and runs[0].status == "running"  # another process sees it live
                        seen = runs[0].steps
        os.kill(process.pid, signal.SIGKILL)
        process.wait(30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    deadline = time.monotonic() + 60
    while True:  # opening for writing marks it (its pid is gone)
        with RunStore(path) as store:
            run = store.list_runs()[0]
            series = store.steps(run.id)
            reports = store.reports(run.id)
        if run.status != "running" or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert run.status == "interrupted" and not run.live and "killed" in run.message
    assert isinstance(run.message, Message) and run.message == INTERRUPTED  # translatable by the window
    assert run.steps >= seen
    assert series.steps == tuple(range(1, run.steps + 1))  # every step up to the last report, none missing
    assert reports[-1].step == run.steps
    # resumed from its last checkpoint, the killed run continues as the same run, from that checkpoint's step
    checkpoint = max((tmp_path / "checkpoints").rglob("step-*.pt"), key=lambda p: int(p.stem.split("-")[1]))
    at = int(checkpoint.stem.split("-")[1])
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpu_train_monitor",
            "run",
            "--resume",
            str(checkpoint),
            "--max-steps",
            str(at + 10),
            "--runs-db",
            str(path),
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    with RunStore(path) as store:
        assert [r.id for r in store.list_runs()] == [run.id]
        resumed = store.run(run.id)
        assert (resumed.status, resumed.steps, resumed.resumes) == ("completed", at + 10, 1)
        assert store.steps(run.id).steps == tuple(range(1, at + 11))


def test_a_run_still_training_is_listed_live_exported_so_far_and_not_deleted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "runs.sqlite3"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gpu_train_monitor",
            "run",
            "--device",
            "cpu",
            "--model",
            "tiny-cnn",
            "--synthetic-samples",
            "256",
            "--batch-size",
            "32",
            "--max-steps",
            "100000",
            "--report-interval",
            "0.05",
            "--runs-db",
            str(path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=ENV,
    )
    try:
        deadline, steps = time.monotonic() + 120, 0
        while steps < 3:
            assert process.poll() is None and time.monotonic() < deadline, "the run ended or never recorded"
            time.sleep(0.2)
            with contextlib.suppress(StoreError):  # not created yet, or still being migrated to the schema
                with RunStore(path, readonly=True) as watcher:
                    steps = watcher.list_runs()[0].steps if watcher.list_runs() else 0
        code, out, _ = runs(capsys, "list", "--runs-db", str(path))
        assert code == 0 and "running (live)" in out.splitlines()[1]
        code, _, err = runs(capsys, "delete", "1", "--yes", "--runs-db", str(path))
        assert one_error_line(code, err).startswith(f"run 1 is still training (process {process.pid} on ")
        code, out, err = runs(capsys, "export", "1", "--format", "csv", "--out", str(tmp_path), "--runs-db", str(path))
        assert code == 0 and "run 1 was still running: exported its" in err
        with open(tmp_path / "run-1-steps.csv", encoding="utf-8") as handle:
            assert len(handle.readlines()) - 1 >= steps
    finally:
        process.send_signal(signal.SIGTERM)  # stops like Stop does
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture()
def open_tmp_path() -> Iterator[Path]:
    """A new folder that other users may enter: pytest's base folder is private to its user, and a pytest
    session starting meanwhile makes it private again."""
    folder = Path(tempfile.mkdtemp(prefix="gpu-train-monitor-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_read_only_store_is_one_warning_and_the_run_still_trains(open_tmp_path: Path) -> None:
    """Read-only for the process that runs: root writes anything, so as root the CLI runs as `nobody`, who
    then owns the folder and the store as a user owns theirs. Made writable again, it takes writes: the
    -wal and -shm SQLite made beside the read-only file are not left read-only."""
    tmp_path = open_tmp_path
    path = tmp_path / "shared" / "runs.sqlite3"
    path.parent.mkdir()
    record_run(path, max_steps=2)
    for target in (path.parent, tmp_path):
        target.chmod(0o755)
    path.chmod(0o444)
    before = path.read_bytes()
    command = [sys.executable, "-m", "gpu_train_monitor", "run", *CLI_FAST, "--max-steps", "3", "--runs-db", str(path)]
    as_nobody: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("as root a read-only file is writable, and setpriv (util-linux) is missing to run as nobody")
        as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        command = [*as_nobody, *command]
        for owned in (path.parent, path):
            os.chown(owned, 65534, 65534)
        # pytest's base folder and a CI's virtual environment (made under mktemp -d) are private to root
        for parent in [*tmp_path.parents, *Path(sys.prefix).parents]:
            if parent.stat().st_mode & 0o005 != 0o005:
                parent.chmod(parent.stat().st_mode | 0o005)
        probe = subprocess.run(
            [*as_nobody, sys.executable, "-c", "import tqdm, psutil"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
        )
        if probe.returncode != 0:
            pytest.skip(f"`nobody` cannot import this environment's packages: {probe.stderr.strip()[-200:]}")
    result = subprocess.run(command, capture_output=True, text=True, env={**ENV, "HOME": str(tmp_path)}, timeout=180)
    assert result.returncode == 0, result.stderr
    assert "this run is not recorded" in result.stderr and f"the run store {path} is read-only" in result.stderr
    assert "Traceback" not in result.stderr and "status      completed" in result.stdout
    assert path.read_bytes() == before
    listed = subprocess.run(
        [*as_nobody, sys.executable, "-m", "gpu_train_monitor", "runs", "list", "--runs-db", str(path)],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=ROOT,
        timeout=60,
    )
    assert listed.returncode == 0 and listed.stdout.splitlines()[1].split()[0] == "1", listed.stderr  # read as it is
    path.chmod(0o644)
    rename = [
        *as_nobody,
        sys.executable,
        "-c",
        "import sys; from gpu_train_monitor.store.run_store import RunStore; "
        "store = RunStore(sys.argv[1]); store.rename(1, 'writable again'); print(store.run(1).name)",
        str(path),
    ]
    renamed = subprocess.run(rename, capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=60)
    assert (renamed.returncode, renamed.stdout.strip()) == (0, "writable again"), renamed.stderr
    if as_nobody:  # a -shm left read-only by an earlier version, not this user's to change: named, not the store
        shm = Path(f"{path}-shm")
        shm.write_bytes(b"")
        shm.chmod(0o444)
        renamed = subprocess.run(rename, capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=60)
        assert f"the run store {path} is writable but its {shm} file is read-only" in renamed.stderr
