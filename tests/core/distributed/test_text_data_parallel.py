"""Data parallel on text: the ranks of a text share its sequences (every `world`-th of one draw, resident or
streamed), and a GPT trains as a rank of a gloo world of one in this process (DistributedDataParallel around it,
its validation summed over ranks). Two processes: tests/e2e/test_data_parallel_cli.py."""

from __future__ import annotations

import socket

import pytest
import torch

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.data.datasets.text import make_synthetic_text
from gpu_train_monitor.data.datasets.types import TextSplits, TokenSplit
from gpu_train_monitor.data.sharding import Shard
from gpu_train_monitor.data.text_batches import ResidentText, StreamText
from gpu_train_monitor.distributed.env import RankContext
from gpu_train_monitor.distributed.group import end_group
from gpu_train_monitor.distributed.strategy import data_parallel_session
from gpu_train_monitor.events.events import Event, RunFinished, StepsReported

CPU = torch.device("cpu")
SYNTHETIC = make_synthetic_text(256, 16, seed=0, device=CPU)
# sequence i is sixteen bytes i: its first token names it
NUMBERED = TextSplits(
    "numbered", TokenSplit(torch.arange(257).clamp_max(255).to(torch.uint8).repeat_interleave(16)[: 256 * 16 + 1], 16),
    SYNTHETIC.val,
)  # fmt: skip


@pytest.mark.parametrize("placement", ["resident", "stream"])
def test_two_ranks_take_disjoint_halves_of_one_draw(placement: str) -> None:
    def source(rank: int) -> ResidentText | StreamText:
        shard, gen = Shard(rank, 2), torch.Generator().manual_seed(7)
        if placement == "resident":
            return ResidentText(NUMBERED, CPU, 8, gen, shard)
        return StreamText(NUMBERED, CPU, 8, gen, 0, False, False, 7, shard)

    epochs = [[ids for ids, _ in source(rank).train_epoch()] for rank in (0, 1)]
    assert all(len(batches) == 256 // 2 // 8 for batches in epochs)
    assert all(ids.shape == (8, 16) and ids.dtype == torch.int64 for batches in epochs for ids in batches)
    if placement == "stream":  # consecutive sequences: each rank its own, the two together all of them
        seen = [{int(first) for ids in batches for first in ids[:, 0]} for batches in epochs]
        assert not seen[0] & seen[1] and len(seen[0] | seen[1]) == 256
    val = [[ids for ids, _ in source(rank).val_batches()] for rank in (0, 1)]
    assert sum(ids.shape[0] for batches in val for ids in batches) == len(SYNTHETIC.val)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_gpt_trains_as_a_rank_of_a_gloo_world_of_one(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in (("RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0"), ("MASTER_ADDR", "127.0.0.1")):
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MASTER_PORT", str(free_port()))
    config = RunConfig(
        device="cpu", model="gpt-tiny", dataset="synthetic-text", layers=1, width=32, heads=2, seq_len=16,
        synthetic_samples=256, batch_size=16, max_steps=4, report_interval=0.01,
    )  # fmt: skip
    events: list[Event] = []
    try:
        session = data_parallel_session(config, RankContext(0, 1, 0), [events.append])
        session.run()
    finally:
        end_group()
    (end,) = (event for event in events if isinstance(event, RunFinished))
    assert end.status == "completed", end.message
    assert end.summary.world_size == 1 and end.summary.val_accuracy is not None
    assert len([loss for e in events if isinstance(e, StepsReported) for loss in e.losses]) == 4
