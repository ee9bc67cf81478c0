"""A remote run store and its local copy, compared: what a mirror must make equal on both sides, the agent
running on this machine as the 'remote' (through the same client code as over ssh), and a run recording
into the remote store as a terminal run would."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from gpu_train_monitor.remote.client.target import RemoteTarget
from gpu_train_monitor.remote.wire import protocol

ROOT = Path(__file__).resolve().parents[2]
ORDER = {"steps": "step", "reports": "step", "rank_reports": "step, rank", "events": "seq"}


def local_agent(store: Path, host: str = "gpu-box") -> RemoteTarget:
    """The agent on this machine serving `store`, reached as `host`."""
    return RemoteTarget.parse(
        host, transport=(sys.executable, "-m", "gpu_train_monitor", "agent", "--runs-db", str(store))
    )


def contents(path: Path, uid: str) -> dict[str, list[tuple]]:
    """Everything recorded for run `uid` in the store at `path`, without ids: equal in a store and its copy."""
    db = sqlite3.connect(path)
    try:
        (run_id,) = db.execute("SELECT id FROM runs WHERE uid = ?", (uid,)).fetchone()
        found = {
            "run": db.execute(f"SELECT {', '.join(protocol.RUN_COLUMNS)} FROM runs WHERE id = ?", (run_id,)).fetchall()
        }
        for table, order in ORDER.items():
            columns = ", ".join(protocol.CHUNK_TABLES[table])
            found[table] = db.execute(
                f"SELECT {columns} FROM {table} WHERE run_id = ? ORDER BY {order}", (run_id,)
            ).fetchall()
    finally:
        db.close()
    return found


def start_recording(store: Path, uid: str, *options: str) -> subprocess.Popen:
    """`python -m gpu_train_monitor run` on the CPU recording into `store` as run `uid` (its output in a log beside
    it)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", GPU_TRAIN_MONITOR_RUN_UID=uid)
    with open(store.parent / f"{uid}.log", "wb") as log:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gpu_train_monitor",
                "run",
                "--model",
                "tiny-cnn",
                "--device",
                "cpu",
                "--synthetic-samples",
                "512",
                "--batch-size",
                "16",
                "--report-interval",
                "0.05",
                "--runs-db",
                str(store),
                *options,
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def kill_processes_mentioning(folder: Path) -> int:
    """Kill every process whose command line names something in `folder` (an agent on a store there, a run or a
    job it started: their specs and logs live beside the store); how many. A test's "remote" processes are
    detached on purpose, so a failed test would leave them training on the shared machine."""
    import psutil

    text, killed = str(folder), []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if process.pid != os.getpid() and any(text in word for word in process.info["cmdline"] or ()):
                process.kill()
                killed.append(process)
        except psutil.Error:
            continue
    psutil.wait_procs(killed, timeout=10)
    return len(killed)
