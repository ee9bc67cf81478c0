"""torch.distributed for a data-parallel run: which rank this process is, its device, the process group, and
the one collective per report that tells every rank what all of them did.

A rank learns its place from the environment that torch.distributed's launchers set (`torchrun`, and the
elastic launch API behind it that `--nproc` uses): RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/MASTER_PORT.
CUDA ranks use NCCL, one GPU each (the local rank's); CPU ranks use gloo. Every collective has a timeout
(`--dist-timeout`): a rank that hangs ends the run within it instead of blocking the others for ever.
"""

from __future__ import annotations

import datetime

import torch
import torch.distributed as dist

from ..base.errors import ConfigError
from ..base.text import Message
from ..device.devices import resolve_device
from .env import RankContext


def rank_device(requested: str, context: RankContext) -> torch.device:
    """The local rank's GPU (cuda:LOCAL_RANK) when the run asks for CUDA (or auto finds GPUs), else the CPU."""
    kind = resolve_device(requested).type if requested == "auto" else torch.device(requested).type
    if kind == "cpu":
        return torch.device("cpu")
    if kind != "cuda":
        raise ConfigError(
            "device", Message("data-parallel runs train on CUDA GPUs or CPU processes, not {kind}", kind=kind)
        )
    count = torch.cuda.device_count()
    if context.local_rank >= count:
        values = dict(rank=context.rank, local_rank=context.local_rank, count=count)
        if count == 1:
            raise ConfigError(
                "nproc",
                Message(
                    "rank {rank} needs GPU cuda:{local_rank}, but this machine has {count} "
                    "GPU; start at most {count} processes per machine",
                    **values,
                ),
            )
        raise ConfigError(
            "nproc",
            Message(
                "rank {rank} needs GPU cuda:{local_rank}, but this machine has {count} GPUs; "
                "start at most {count} processes per machine",
                **values,
            ),
        )
    return torch.device("cuda", context.local_rank)


def start_group(context: RankContext, device: torch.device) -> None:
    """Join the process group (NCCL on CUDA, gloo on the CPU), with a timeout on every collective."""
    if dist.is_initialized():
        return
    timeout = datetime.timedelta(seconds=context.timeout_s)
    if device.type == "cuda":
        dist.init_process_group("nccl", timeout=timeout, device_id=device)
    else:
        dist.init_process_group("gloo", timeout=timeout)


def end_group() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()


def collective_device(device: torch.device) -> torch.device:
    """Where a collective's tensors live: NCCL reduces GPU tensors, gloo host ones."""
    return device if device.type == "cuda" and dist.get_backend() == "nccl" else torch.device("cpu")


def gather_rows(values: torch.Tensor) -> torch.Tensor:
    """Every rank's 1-D float64 `values` (same length on all), as a (world, len) tensor on the host: the one
    collective (and host sync) of a report."""
    rows = [torch.empty_like(values) for _ in range(dist.get_world_size())]
    dist.all_gather(rows, values)
    return torch.stack(rows).cpu()


def sum_over_ranks(values: torch.Tensor) -> None:
    """Sum `values` over the ranks, in place (validation's totals, once per epoch)."""
    if values.device.type != collective_device(values.device).type:
        host = values.cpu()
        dist.all_reduce(host)
        values.copy_(host)
    else:
        dist.all_reduce(values)


def gather_strings(value: str) -> list[str]:
    """Each rank's `value` (its device name), by rank: once, at the start."""
    values: list[object] = [None] * dist.get_world_size()
    dist.all_gather_object(values, value)
    return [str(v) for v in values]
