"""The resident placement (`ResidentBatches`): the whole dataset on the device, augmented and shuffled there.

Its own module because it is one of the two placements behind gpu_train_monitor.data.batches' `BatchSource` interface,
and shares nothing with the streamed one but that interface and its random-state helpers (which live there).
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

from .batches import Batch, BatchEpoch, Note, Position, RandomState, on_device, random_state_of, restore_random_state
from .datasets.types import DatasetSplits
from .preprocess import DevicePreprocess
from .sharding import ONE, Shard, shard_split


class ResidentBatches:
    """The dataset lives on the device; shuffling, augmentation and normalisation run there too."""

    placement = "resident"
    notes: tuple[Note, ...] = ()

    def __init__(
        self,
        splits: DatasetSplits,
        device: torch.device,
        batch_size: int,
        preprocess: DevicePreprocess,
        generator: torch.Generator,
        shard: Shard = ONE,
    ) -> None:
        """`shard`: a rank of a data-parallel run keeps only its every-`world`-th image on its device."""
        self.train = on_device(shard_split(splits.train, shard, equal=True), device)  # shard first: only it goes over
        self.val = on_device(shard_split(splits.val, shard, equal=False), device)
        self.batch_size = batch_size
        self.preprocess = preprocess
        self.gen = generator
        self.augmented: torch.Tensor | None = None  # the epoch's augmented training images, kept across epochs

    def steps_per_epoch(self) -> int:
        return len(self.train) // self.batch_size

    def set_batch_size(self, batch_size: int) -> None:
        self.batch_size = batch_size

    def train_epoch(self) -> BatchEpoch:
        return _ResidentEpoch(self)

    def random_state(self) -> RandomState:
        return random_state_of(self.preprocess, None)

    def set_random_state(self, state: RandomState, data: bool = True) -> None:
        restore_random_state(state, self.preprocess, None, data)

    def val_batches(self, batch_size: int | None = None) -> Iterator[Batch]:
        size = batch_size or self.batch_size
        for start in range(0, len(self.val), size):
            end = start + size
            yield self.preprocess(self.val.images[start:end], augment=False), self.val.labels[start:end]


class _ResidentEpoch:
    """The whole set is augmented once per epoch on the device into a buffer kept across epochs
    (airbench's approach); each batch is then a gather of a random slice of it, plus normalisation.
    The augmentation runs at the first `next()`, so an out-of-memory error there can be retried too."""

    def __init__(self, source: ResidentBatches) -> None:
        self.source = source
        self.mix: torch.Tensor | None = None  # a random order of the augmented images
        self.labels: torch.Tensor | None = None  # labels of the augmented images
        self.start = 0
        self.previous = 0  # where the last batch started
        self.copy_s = 0.0  # a resident batch is on the device already: cutting it is all its data time

    def __iter__(self) -> _ResidentEpoch:
        return self

    def remaining_samples(self) -> int:
        return len(self.source.train) - self.start

    def give_back(self) -> None:
        self.start = self.previous

    def position(self) -> Position:
        return {"start": self.start, "drawn": int(self.mix is not None)}

    def seek(self, position: Position) -> None:
        if position["drawn"]:  # the epoch's order and augmentation were drawn: draw the same again
            self._draw()
        self.start = self.previous = position["start"]

    def _draw(self) -> None:
        source = self.source
        augmented, order = source.preprocess.augment_shuffled(source.train.images, source.augmented)
        source.augmented = augmented
        labels = source.train.labels[order]
        self.mix = torch.randperm(len(order), generator=source.gen, device=order.device)
        self.labels = labels

    def __next__(self) -> Batch:
        source = self.source
        if self.mix is None:
            self._draw()
        assert self.labels is not None and source.augmented is not None
        end = self.start + source.batch_size  # re-read: the batch may shrink mid-epoch (out of memory)
        if end > len(self.mix):
            raise StopIteration
        idx = self.mix[self.start : end]
        batch = (
            source.preprocess.to_model_input(source.augmented.index_select(0, idx)),
            self.labels.index_select(0, idx),
        )
        self.previous, self.start = self.start, end  # only once the batch exists
        return batch
