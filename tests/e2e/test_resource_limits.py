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
    command = (
        f"ulimit -v 5000000 && exec {sys.executable} -m gpu_train_monitor run --device cpu --model tiny-cnn "
        "--synthetic-samples 20000 --batch-size 16384 --max-steps 3 --on-oom shrink "
        f"--summary-json {tmp_path / 's.json'}"
    )
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
    result = cli(
        "run",
        "--device",
        "cpu",
        "--model",
        "tiny-cnn",
        "--placement",
        "resident",
        "--synthetic-samples",
        str(samples),
        preexec_fn=_limit_data_segment,
    )
    line = user_error_line(result, "--placement", "synthetic", "--placement stream")
    sizes = re.search(r"needs ([\d.]+) (kB|MB|GB|TB) .* only ([\d.]+) (B|kB|MB|GB|TB) is free", line)
    assert sizes, line
    scale = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
    needed, free = float(sizes[1]) * scale[sizes[2]], float(sizes[3]) * scale[sizes[4]]
    assert needed > DATA_LIMIT > free  # it says how much was needed and how little is free


LIMITED_RUN = r'''
import json, torch
from torch import nn
import gpu_train_monitor.engine.recipe
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.events.events import OutOfMemory
from gpu_train_monitor.memory.probe import MemoryProbe
from gpu_train_monitor.model.models import build_model
from gpu_train_monitor.engine.session import TrainingSession

held = []
class Greedy(nn.Module):
    """Batches over 8 ask for 8 GB (the allocator refuses: the limit is 5 GB), keeping 100 MB more each time."""
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
    def forward(self, x):
        if self.training and x.shape[0] > 8:
            held.append(torch.ones(100_000_000, dtype=torch.uint8))
            torch.empty(8 * 2**30, dtype=torch.uint8)
        return self.inner(x)

recipe = gpu_train_monitor.engine.recipe
recipe.build_model = lambda name, classes, channels: Greedy(build_model(name, classes, channels))
events = []
config = RunConfig(device="cpu", model="tiny-cnn", synthetic_samples=256, batch_size=32, max_steps=4, on_oom="shrink",
                   report_interval=0.01)
finished = TrainingSession(config, [events.append]).run()
ooms = [e for e in events if isinstance(e, OutOfMemory)]
print(json.dumps({"status": finished.status, "capacity": MemoryProbe("cpu").sample().capacity_bytes,
                  "messages": [e.message for e in ooms], "free": [e.free_bytes for e in ooms]}))
'''


def test_a_real_cpu_failure_under_ulimit_v_names_the_limit_and_reads_free_memory_at_each_failure() -> None:
    """A real allocation failure in a process under RLIMIT_AS (`ulimit -v 5000000`): the message names the
    process's limit (no CUDA allocator's words), the free figure is read again at each failure, and the
    probe's capacity is the limit."""
    limit = 5_000_000 * 1024
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-c", LIMITED_RUN],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == "completed" and result["capacity"] == limit
    first, second = result["messages"]
    assert (
        "asked for 8.59 GB, more than the process's limit had left at that moment; the process is limited to "
        "5.12 GB of address space by ulimit -v (RLIMIT_AS)"
    ) in first
    assert "reserved but unallocated" not in first + second
    assert result["free"][0] - result["free"][1] >= 80_000_000  # the 100 MB kept since the first failure
