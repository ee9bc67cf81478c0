"""How many samples a batch holds, for the framework callbacks: Lightning hands them the batch, a transformers
model is called with keyword arguments. Reads shapes only, never a tensor's values (no host sync)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch


def batch_samples(batch: Any) -> int:
    """The leading dimension of the first tensor in `batch` (a tensor, or one inside a tuple, a list or a dict,
    looked into recursively); 0 when it holds none."""
    if isinstance(batch, torch.Tensor):
        return int(batch.shape[0]) if batch.dim() > 0 else 0
    if isinstance(batch, Mapping):
        values: Any = batch.values()
    elif isinstance(batch, (list, tuple)):
        values = batch
    else:
        return 0
    for value in values:
        samples = batch_samples(value)
        if samples:
            return samples
    return 0


class CommonBatchSize:
    """The batch size of a loop: the most common samples per step (the earlier of two as common), so a loop's last,
    partial batch or an odd step is not its batch size; the first step's until more are seen."""

    def __init__(self) -> None:
        self.size = 0
        self._steps: dict[int, int] = {}  # samples per step -> steps that had them

    def count(self, samples: int) -> None:
        steps = self._steps
        steps[samples] = steps.get(samples, 0) + 1
        if not self.size or (samples != self.size and steps[samples] > steps.get(self.size, 0)):
            self.size = samples
