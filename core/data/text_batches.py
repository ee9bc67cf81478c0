"""The two placements of a text (`TextSplits`), behind the same `BatchSource` interface as images'.

A batch is `batch_size` sequences: token ids (B x T) and their targets, the same tokens one position on (B x T),
both int64 on the device. Token ids are kept as bytes (uint8) until then: a quarter of the memory and of the copy.

- `ResidentText`: the whole text on the device as one uint8 tensor. Each epoch draws its sequences' start offsets
  at random on the device (as many as the text has sequences), and each batch is a gather of those slices: no
  host work and no copy per step.
- `StreamText`: the ordinary DataLoader path: the text on the host cut into consecutive sequences, shuffled by a
  sampler, gathered a batch at a time (workers, pin_memory) and copied to the device
  (`gpu_train_monitor.data.batches.StreamEpoch`, the epochs images stream in).

A data-parallel rank draws what a single process would (the start offsets of every sequence, the order of every
sequence) and takes every `world`-th. Validation reads the validation text's consecutive sequences in order.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler, Sampler

from .batches import (
    Batch,
    BatchEpoch,
    Note,
    Position,
    RandomState,
    StreamEpoch,
    quiet_iter,
    random_state_of,
    restore_random_state,
)
from .datasets.types import TextSplits, TokenSplit
from .sharding import ONE, RankBatchSampler, Shard
from .transfer import transfer_policy, usable_workers


class TextInput:
    """What turns gathered sequences into the model's input: uint8 token ids widened to int64 on the device. Holds
    the run's device generator (the start offsets) and a host one, which a checkpoint saves as it saves images'."""

    def __init__(self, generator: torch.Generator) -> None:
        self.gen = generator
        self.host_rng = np.random.default_rng(int(generator.initial_seed()))

    def __call__(self, ids: torch.Tensor, augment: bool = False) -> torch.Tensor:
        return ids.long()


def gather(tokens: torch.Tensor, starts: torch.Tensor, seq_len: int) -> Batch:
    """The sequences starting at `starts` (inputs) and their targets (one token on), uint8 as `tokens` is."""
    rows = tokens[starts.unsqueeze(1) + torch.arange(seq_len + 1, device=tokens.device)]
    return rows[:, :-1], rows[:, 1:]


def _val_batches(split: TokenSplit, batch_size: int, shard: Shard) -> Iterator[torch.Tensor]:
    """Start offsets of this rank's validation sequences (consecutive ones, every `world`-th), a batch at a time."""
    starts = torch.arange(shard.rank, len(split), shard.world, device=split.tokens.device) * split.seq_len
    yield from starts.split(batch_size)


class ResidentText:
    """The text lives on the device; each batch gathers sequences at random offsets there."""

    placement = "resident"
    notes: tuple[Note, ...] = ()

    def __init__(
        self, splits: TextSplits, device: torch.device, batch_size: int, generator: torch.Generator, shard: Shard = ONE
    ) -> None:
        self.train = TokenSplit(splits.train.tokens.to(device), splits.train.seq_len)
        self.val = TokenSplit(splits.val.tokens.to(device), splits.val.seq_len)
        self.batch_size = batch_size
        self.shard = shard
        self.preprocess = TextInput(generator)

    def steps_per_epoch(self) -> int:
        return len(self.train) // self.shard.world // self.batch_size

    def set_batch_size(self, batch_size: int) -> None:
        self.batch_size = batch_size

    def train_epoch(self) -> BatchEpoch:
        return _ResidentTextEpoch(self)

    def random_state(self) -> RandomState:
        return random_state_of(self.preprocess, None)

    def set_random_state(self, state: RandomState, data: bool = True) -> None:
        restore_random_state(state, self.preprocess, None, data)

    def val_batches(self, batch_size: int | None = None) -> Iterator[Batch]:
        for starts in _val_batches(self.val, batch_size or self.batch_size, self.shard):
            ids, targets = gather(self.val.tokens, starts, self.val.seq_len)
            yield ids.long(), targets.long()


class _ResidentTextEpoch:
    """One pass: as many sequences as the text holds, each at a start offset drawn at random on the device at the
    first `next()` (so an out-of-memory error there can be retried); each batch is the next `batch_size` of them."""

    def __init__(self, source: ResidentText) -> None:
        self.source = source
        self.starts: torch.Tensor | None = None
        self.start = 0
        self.previous = 0
        self.copy_s = 0.0  # the text is on the device already

    def __iter__(self) -> _ResidentTextEpoch:
        return self

    def _count(self) -> int:
        return len(self.source.train) // self.source.shard.world

    def remaining_samples(self) -> int:
        return self._count() - self.start

    def give_back(self) -> None:
        self.start = self.previous

    def position(self) -> Position:
        return {"start": self.start, "drawn": int(self.starts is not None)}

    def seek(self, position: Position) -> None:
        if position["drawn"]:  # the epoch's offsets were drawn: draw the same again
            self._draw()
        self.start = self.previous = position["start"]

    def _draw(self) -> None:
        source = self.source
        tokens, shard = source.train.tokens, source.shard
        highest = tokens.shape[0] - source.train.seq_len  # a sequence and its targets take seq_len + 1 tokens
        every = torch.randint(0, highest, (len(source.train),), generator=source.preprocess.gen, device=tokens.device)
        self.starts = every[shard.rank : self._count() * shard.world : shard.world]

    def __next__(self) -> Batch:
        source = self.source
        if self.starts is None:
            self._draw()
        assert self.starts is not None
        end = self.start + source.batch_size  # re-read: the batch may shrink mid-epoch (out of memory)
        if end > self._count():
            raise StopIteration
        ids, targets = gather(source.train.tokens, self.starts[self.start : end], source.train.seq_len)
        batch = ids.long(), targets.long()
        self.previous, self.start = self.start, end  # only once the batch exists
        return batch


class _Sequences(Dataset):
    """A text's consecutive sequences; an item is a whole batch, gathered in one go from a list of indices."""

    def __init__(self, split: TokenSplit) -> None:
        self.split = split

    def __len__(self) -> int:
        return len(self.split)

    def __getitem__(self, indices: list[int]) -> Batch:
        starts = torch.as_tensor(indices, dtype=torch.int64) * self.split.seq_len
        ids, targets = gather(self.split.tokens, starts, self.split.seq_len)
        return ids, targets


class StreamText:
    """The text in host memory, served by a DataLoader; each batch is copied to the device once (as bytes)."""

    placement = "stream"

    def __init__(
        self,
        splits: TextSplits,
        device: torch.device,
        batch_size: int,
        generator: torch.Generator,
        workers: int,
        pin_memory: bool,
        non_blocking: bool,
        seed: int,
        shard: Shard = ONE,
    ) -> None:
        cpu = torch.device("cpu")
        self.train = TokenSplit(splits.train.tokens.to(cpu), splits.train.seq_len)
        self.val = TokenSplit(splits.val.tokens.to(cpu), splits.val.seq_len)
        self.device = device
        self.batch_size = batch_size
        self.shard = shard
        self.preprocess = TextInput(generator)
        self.workers, worker_notes = usable_workers(workers)
        self.pin_memory, self.non_blocking, copy_notes = transfer_policy(device.type, pin_memory, non_blocking)
        self.notes = copy_notes + worker_notes
        self.host_gen = torch.Generator().manual_seed(seed)

    def steps_per_epoch(self) -> int:
        return len(self.train) // (self.batch_size * self.shard.world)

    def set_batch_size(self, batch_size: int) -> None:
        self.batch_size = batch_size

    def loader(self, split: TokenSplit, shuffle: bool, drop_last: bool, batch_size: int | None = None) -> DataLoader:
        size = batch_size or self.batch_size
        sampler: Sampler[list[int]]
        if shuffle and self.shard.world > 1:
            sampler = RankBatchSampler(len(split), self.host_gen, size, self.shard)
        elif shuffle:
            sampler = BatchSampler(RandomSampler(range(len(split)), generator=self.host_gen), size, drop_last)
        else:  # validation: this rank's every `world`-th sequence, in order
            sampler = BatchSampler(list(range(self.shard.rank, len(split), self.shard.world)), size, False)
        return DataLoader(
            _Sequences(split), sampler=sampler, batch_size=None, num_workers=self.workers, pin_memory=self.pin_memory
        )

    def to_device(self, ids: torch.Tensor, targets: torch.Tensor) -> Batch:
        asynchronous = self.non_blocking and ids.is_pinned()
        return (
            ids.to(self.device, non_blocking=asynchronous).long(),
            targets.to(self.device, non_blocking=asynchronous).long(),
        )

    def train_epoch(self) -> BatchEpoch:
        return StreamEpoch(self)  # type: ignore[arg-type]

    def random_state(self) -> RandomState:
        return random_state_of(self.preprocess, self.host_gen)

    def set_random_state(self, state: RandomState, data: bool = True) -> None:
        restore_random_state(state, self.preprocess, self.host_gen, data)

    def val_batches(self, batch_size: int | None = None) -> Iterator[Batch]:
        for ids, targets in quiet_iter(self.loader(self.val, shuffle=False, drop_last=False, batch_size=batch_size)):
            yield self.to_device(ids, targets)
