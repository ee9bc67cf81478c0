"""A small model trained in a plain loop of the user's own, for the watch's tests: the losses it computed, read
with `.item()` by the test after the fact (never by the watch); and an unchanged script run under `watch --` as a
process of its own, with what it recorded."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from gpu_train_monitor.store.run_store import RunStore
from gpu_train_monitor.watch.session import Watch
from tests.support.processes import ENV, WAIT_S

BATCH = 16


def tiny_model(seed: int = 0) -> tuple[nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3))
    return model, torch.optim.AdamW(model.parameters(), lr=1e-2)


def train(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    steps: int,
    on_step: Callable[[torch.Tensor, int], None],
    fail_at: int | None = None,
    error: BaseException | None = None,
) -> list[torch.Tensor]:
    """`steps` optimizer steps on random data; `on_step(loss, samples)` after each (the watch's step). Raises
    `error` at step `fail_at` (1-based) before its backward. Returns the losses, still tensors."""
    losses = []
    for step in range(1, steps + 1):
        x, y = torch.randn(BATCH, 12), torch.randint(0, 3, (BATCH,))
        loss = nn.functional.cross_entropy(model(x), y)
        if fail_at == step and error is not None:
            raise error
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.detach())
        on_step(loss, BATCH)
    return losses


def recorded_run(path: Path) -> tuple[Any, Any, list[Any], list[Any]]:
    """The one run in the store at `path`: its row, its steps, its reports and its events."""
    with RunStore(path) as store:
        (run,) = store.list_runs()
        return run, store.steps(run.id), store.reports(run.id), store.events(run.id)


# ---- `gpu-train-monitor watch -- python script.py` as a process of its own -----------------------------------------
def watched(
    folder: Path, db: Path, *command: str, uid: str | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """`python -P -m gpu_train_monitor watch --runs-db DB -- COMMAND` in `folder` (-P: a research folder's own `core`
    must not shadow ours, as the window starts it), under `uid` when given, its output piped."""
    env = {name: value for name, value in (env or ENV).items() if name != "GPU_TRAIN_MONITOR_RUN_UID"}
    if uid:
        env["GPU_TRAIN_MONITOR_RUN_UID"] = uid
    args = [sys.executable, "-P", "-m", "gpu_train_monitor", "watch", "--runs-db", str(db), "--", *command]
    return subprocess.Popen(args, cwd=folder, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def run_watched(folder: Path, script: str, *arguments: str, env: dict[str, str] | None = None) -> WatchedScript:
    """Write `script` as train.py in `folder`, run it under `watch --` to its end, and read what was recorded."""
    (folder / "train.py").write_text(script)
    db = folder / "runs.db"
    process = watched(folder, db, "python", "train.py", *arguments, env=env)
    stdout, stderr = process.communicate(timeout=WAIT_S)
    return WatchedScript(process.returncode, stdout, stderr, db)


@dataclass
class WatchedScript:
    """A script's end under `watch --`: its exit code, its output, and the store it recorded into."""

    returncode: int
    stdout: str
    stderr: str
    db: Path

    def run(self) -> tuple[Any, list[float | None], dict[str, Any]]:
        """The only run recorded: its row, its steps' losses (None where unknown) and its config."""
        with RunStore(self.db) as store:
            (run,) = store.list_runs()
            return run, list(store.steps(run.id).losses), dict(store.config(run.id))

    def reports(self) -> list[Any]:
        with RunStore(self.db) as store:
            (run,) = store.list_runs()
            return list(store.reports(run.id))

    def events(self) -> list[Any]:
        with RunStore(self.db) as store:
            (run,) = store.list_runs()
            return list(store.events(run.id))

    def summary(self) -> dict[str, Any]:
        with RunStore(self.db) as store:
            (run,) = store.list_runs()
            return store.summary(run.id) or {}


def record_watched_loop(path: Path, steps: int, **watch_options: Any) -> int:
    """A small regression loop recorded with the watch API in this process (CPU), as a watched script's run is: the
    run's id in the store at `path`. `watch_options` go to the Watch (a script's `source` and `config`, say)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    options: dict[str, Any] = {"signals": False, "report_interval_s": 0.0, "predict": False, **watch_options}
    with Watch(model, optimizer, runs_db=path, **options) as watch:
        for _ in range(steps):
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            watch.step(loss, samples=len(x))
    with RunStore(path, readonly=True) as store:
        run_id = store.find_uid(watch.run_uid)
    assert run_id is not None
    return run_id
