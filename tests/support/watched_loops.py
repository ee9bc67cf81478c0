"""A small model trained in a plain loop of the user's own, for the watch's tests: the losses it computed, read
with `.item()` by the test after the fact (never by the watch)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from gpu_train_monitor.store.run_store import RunStore

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
