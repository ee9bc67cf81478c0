"""Out-of-memory on demand: a model that raises CUDA's out-of-memory error above a batch size, and a memory
measure that grows linearly with the batch (the finder searches it instead of running real trials)."""

from __future__ import annotations

import torch
from torch import nn

from gpu_train_monitor.config.run_config import RunConfig


class OutOfMemoryAbove(nn.Module):
    """The real model, except that a training batch larger than `limit` raises CUDA's out-of-memory error."""

    def __init__(self, inner: nn.Module, limit: int) -> None:
        super().__init__()
        self.inner, self.limit = inner, limit

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training and x.shape[0] > self.limit:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 512.00 MiB.")
        return self.inner(x)


class LinearMemory:
    """A fast stand-in for real trials: peak = fixed + per_sample * batch."""

    def __init__(self, fixed: int, per_sample: int) -> None:
        self.fixed, self.per_sample = fixed, per_sample
        self.tried: list[int] = []

    def __call__(self, config: RunConfig, batch: int, steps: int) -> int:
        self.tried.append(batch)
        return self.fixed + self.per_sample * batch
