"""Where a watched training runs, seen from inside the user's process: its rank, its device, and the one way the
watch speaks there (a line on stderr)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn


def warn(text: str) -> None:
    """One line on stderr: the watch's only way to speak inside a user's program."""
    print(f"gpu-train-monitor: {text}", file=sys.stderr, flush=True)


def training_rank() -> int:
    """This process's rank under torch.distributed (initialised, or launched by torchrun), 0 otherwise."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return int(dist.get_rank())
    try:
        return int(os.environ.get("RANK", "0") or 0)
    except ValueError:
        return 0


def device_of(model: nn.Module | None, optimizers: Sequence[torch.optim.Optimizer]) -> torch.device:
    """Where the watched model trains: its first parameter's device (an index made explicit)."""
    tensors = list(model.parameters()) if model is not None else []
    tensors += [p for opt in optimizers for group in opt.param_groups for p in group["params"]]
    device = tensors[0].device if tensors else torch.device("cpu")
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device


def as_list(optimizer: Any) -> list[torch.optim.Optimizer]:
    """One optimizer or several (a GAN's), as a list."""
    if optimizer is None:
        return []
    return list(optimizer) if isinstance(optimizer, (list, tuple)) else [optimizer]


def unwrapped_model(model: nn.Module | None) -> nn.Module | None:
    """The model inside DDP, DataParallel or torch.compile's wrapper: the run is named after it (its forward is
    still the wrapper's, where the capture counts samples)."""
    while model is not None:
        if isinstance(model, (nn.parallel.DistributedDataParallel, nn.DataParallel)):
            model = model.module
        elif isinstance(getattr(model, "_orig_mod", None), nn.Module):  # torch.compile's OptimizedModule
            model = model._orig_mod
        else:
            return model
    return model
