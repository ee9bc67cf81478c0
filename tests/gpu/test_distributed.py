"""Data-parallel runs on CUDA GPUs (NCCL): every GPU present trains its share, or, with one GPU, asking for
more is a clear error. Skipped without a CUDA GPU (the CPU tests with gloo run everywhere)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gpu_train_monitor.store.run_store import RunStore

pytestmark = pytest.mark.gpu
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpu_train_monitor", "run", *args], capture_output=True, text=True, env=ENV, timeout=300
    )


def test_every_gpu_trains_its_share_with_nccl(tmp_path: Path) -> None:
    gpus = torch.cuda.device_count()
    if gpus < 2:
        pytest.skip("one CUDA GPU: a data-parallel run needs two")
    store, summary = tmp_path / "runs.sqlite3", tmp_path / "summary.json"
    result = cli(
        "--device",
        "cuda",
        "--nproc",
        str(gpus),
        "--model",
        "resnet18",
        "--batch-size",
        str(64 * gpus),
        "--max-steps",
        "30",
        "--sync-bn",
        "--runs-db",
        str(store),
        "--summary-json",
        str(summary),
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(summary.read_text())
    assert data["world_size"] == gpus
    assert [r["device"] for r in data["ranks"]] == [f"cuda:{i}" for i in range(gpus)]
    assert all(r["peak_allocated_bytes"] > 0 and r["peak_reserved_bytes"] > 0 for r in data["ranks"])
    with RunStore(store) as runs:
        run = runs.list_runs()[0]
        assert {s.device for s in runs.rank_reports(run.id)} == {f"cuda:{i}" for i in range(gpus)}


def test_more_processes_than_gpus_is_a_clear_error() -> None:
    gpus = torch.cuda.device_count()
    result = cli("--device", "cuda", "--nproc", str(gpus + 1), "--batch-size", str(32 * (gpus + 1)), "--max-steps", "2")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{gpus + 1} processes need {gpus + 1} GPUs, but this machine has {gpus}" in result.stderr


def test_ddp_in_a_world_of_one_trains_on_the_gpu(tmp_path: Path) -> None:
    """The DDP wrapper and the per-report all_gather over NCCL, in one process (what the overhead bench times)."""
    code = (
        "import os, json, sys\n"
        "os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT='29561', RANK='0', WORLD_SIZE='1', LOCAL_RANK='0')\n"
        "from gpu_train_monitor.config.run_config import RunConfig\n"
        "from gpu_train_monitor.distributed.env import RankContext\n"
        "from gpu_train_monitor.distributed.strategy import data_parallel_session\n"
        "f = data_parallel_session(RunConfig(device='cuda', model='resnet18', batch_size=128, max_steps=20),\n"
        "                       RankContext(0, 1, 0)).run()\n"
        "print(json.dumps([f.status, f.summary.world_size, f.summary.ranks[0]['device']]))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == ["completed", 1, "cuda:0"]
