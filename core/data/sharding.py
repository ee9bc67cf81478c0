"""How a data-parallel run splits its data over the ranks (processes), so that together they train what one
process would.

- Streamed data: every rank draws the single-process order (a `RandomSampler` over the whole training set
  with the same seeded generator), cuts it into global batches and takes every `world`-th image of each
  (`RankBatchSampler`). The ranks' batches at step t are then exactly the one-process batch at step t;
  the augmentation draws its random crops and flips for the whole global batch on every rank and each rank
  keeps its own positions (`DevicePreprocess` with a `Shard`), so every image is cropped as one process
  would crop it. torch's `DistributedSampler` draws another order (seeded per epoch), which a one-process
  run would not share.
- Resident data: each rank keeps only its shard (every `world`-th image) on its own device and shuffles and
  augments it there: the dataset's memory per device shrinks by `world`, at the price of an order that
  differs from a one-process run's.
- Validation: each rank evaluates every `world`-th validation image; the sums are reduced once per epoch.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch.utils.data import RandomSampler, Sampler

from .datasets.types import ImageSplit


@dataclass(frozen=True)
class Shard:
    """This process's part of the data: rank `rank` of `world`."""

    rank: int
    world: int


ONE = Shard(0, 1)  # an ordinary run: the whole data


def shard_split(split: ImageSplit, shard: Shard, equal: bool) -> ImageSplit:
    """Every `world`-th image, starting at `rank`. `equal` cuts every rank's share to the same length (the
    training set: every rank must make the same number of steps); validation keeps every image once."""
    if shard.world == 1:
        return split
    end = len(split) // shard.world * shard.world if equal else len(split)
    index = torch.arange(shard.rank, end, shard.world, device=split.labels.device)
    return ImageSplit(split.images.index_select(0, index), split.labels.index_select(0, index))


class RankBatchSampler(Sampler[list[int]]):
    """Batches of `batch_size` indices for one rank: its every-`world`-th part of each global batch
    (`batch_size * world` images) of the single-process order. The generator is consumed exactly as a
    `BatchSampler(RandomSampler(...))` epoch consumes it, so a run's later epochs keep matching too."""

    def __init__(self, size: int, generator: torch.Generator, batch_size: int, shard: Shard) -> None:
        self.size = size
        self.generator = generator
        self.batch_size = batch_size
        self.shard = shard

    def __len__(self) -> int:
        return self.size // (self.batch_size * self.shard.world)

    def __iter__(self) -> Iterator[list[int]]:
        order = list(RandomSampler(range(self.size), generator=self.generator))
        step = self.batch_size * self.shard.world
        for start in range(0, len(self) * step, step):
            yield order[start + self.shard.rank : start + step : self.shard.world]
