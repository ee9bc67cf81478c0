"""Runs under a real resource limit (`ulimit -v`, RLIMIT_DATA): the limit belongs to the process, so each test
starts one."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

from tests.support.cli import cli, user_error_line

ROOT = Path(__file__).resolve().parents[2]


def test_a_real_cpu_allocation_failure_while_making_a_batch_shrinks_and_trains_every_step(tmp_path: Path) -> None:
    """Under a 5 GB address-space limit the 16,384-image batch cannot be made or trained; the run used
    to say `completed` with 0 steps and no out-of-memory message."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    command = (f"ulimit -v 5000000 && exec {sys.executable} -m core run --device cpu --model tiny-cnn "
               "--synthetic-samples 20000 --batch-size 16384 --max-steps 3 --on-oom shrink "
               f"--summary-json {tmp_path / 's.json'}")
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert "out of memory" in proc.stderr, proc.stderr[-2000:]
    assert "status      completed" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert "steps       3 (" in proc.stdout
    assert "batch size  " in proc.stdout and "(requested 16384; halved" in proc.stdout
    summary = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert summary["batch_size"] < 16384 and summary["batch_size_changes"][0]["from"] == 16384
    assert summary["steps"] == 3 and summary["samples"] == 3 * summary["batch_size"]


DATA_LIMIT = 3 * 2**30


def _limit_data_segment() -> None:
    resource.setrlimit(resource.RLIMIT_DATA, (DATA_LIMIT, resource.getrlimit(resource.RLIMIT_DATA)[1]))


def test_resident_dataset_that_cannot_fit_suggests_stream() -> None:
    # 1.5M synthetic images are ~5.5 GB; the process may only use 3 GB of data memory.
    samples = 1_500_000
    result = cli("run", "--device", "cpu", "--model", "tiny-cnn", "--placement", "resident",
                 "--synthetic-samples", str(samples), preexec_fn=_limit_data_segment)
    line = user_error_line(result, "--placement", "synthetic", "--placement stream")
    sizes = re.search(r"needs ([\d.]+) (kB|MB|GB|TB) .* only ([\d.]+) (B|kB|MB|GB|TB) is free", line)
    assert sizes, line
    scale = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
    needed, free = float(sizes[1]) * scale[sizes[2]], float(sizes[3]) * scale[sizes[4]]
    assert needed > DATA_LIMIT > free  # it says how much was needed and how little is free
