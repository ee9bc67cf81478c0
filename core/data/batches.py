"""The two data placements, behind one interface that yields ready-to-train device batches.

- `ResidentBatches` (gpu_train_monitor.data.resident_batches): the whole dataset lives on the device as uint8; each
  epoch augments and shuffles the whole training set there at once, and each batch is a slice of it. No
  host-to-device copy per step.
- `StreamBatches`: the ordinary DataLoader path from host memory (workers, pin_memory), one copy per
  batch with `.to(device, non_blocking=...)` where `gpu_train_monitor.data.transfer` says it is safe. Batches are
  gathered by index in one go (a batch sampler), not image by image, which is what makes this path fast.

Both survive an error while a batch is produced (an out-of-memory error in the augmentation, the
input conversion or the copy to the device): an epoch is an iterator object, not a generator, and it
advances only after a batch was made, so the next call retries the same images (with the batch size
in force then). A generator would be closed for good by the exception, and the epoch would end early.

Both use the same device-side steps (`gpu_train_monitor.data.preprocess.DevicePreprocess`).

A checkpoint taken mid-epoch resumes at the right batch: `BatchSource.random_state()` is read at each
epoch's start and at the checkpoint, and `BatchEpoch.position()` says how far the epoch got. Resuming
sets the epoch's starting state, makes a fresh epoch (the same order, the same augmentation) and
`seek`s it to the position; the state at the checkpoint then takes over.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Iterator
from typing import Any, Protocol

import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler, Sampler, SequentialSampler

from .datasets.types import DatasetSplits, ImageSplit
from .preprocess import DevicePreprocess
from .sharding import ONE, RankBatchSampler, Shard, shard_split
from .transfer import transfer_policy, usable_workers

Batch = tuple[torch.Tensor, torch.Tensor]
Note = tuple[str, str]  # (level: "info" or "warning", text), for the run's log
Position = dict[str, int]  # how far an epoch got (plain ints: a checkpoint stores it)
RandomState = dict[str, Any]  # a source's random generators' states (tensors and a string)


class BatchEpoch(Protocol):
    """One pass over the training set. `next()` raises StopIteration at the end; any other exception
    leaves the position where it was, so the call can be repeated. `give_back()` returns the last batch's
    images to the epoch (its training step failed): the next call serves them again."""

    copy_s: float  # of the last next(): the seconds it took the batch to the device (0: it was there already)

    def __iter__(self) -> Iterator[Batch]: ...
    def __next__(self) -> Batch: ...
    def give_back(self) -> None: ...
    def remaining_samples(self) -> int: ...
    def position(self) -> Position: ...
    def seek(self, position: Position) -> None: ...  # a fresh epoch, made under the random state of the

    # epoch that reported `position` at its start, continues where that one was


class BatchSource(Protocol):
    """What the training loop needs from a placement."""

    placement: str
    batch_size: int
    notes: tuple[Note, ...]  # what the source changed from the request, said once at the start

    def steps_per_epoch(self) -> int: ...
    def train_epoch(self) -> BatchEpoch: ...
    def val_batches(self, batch_size: int | None = None) -> Iterator[Batch]: ...
    def set_batch_size(self, batch_size: int) -> None: ...
    def random_state(self) -> RandomState: ...
    def set_random_state(self, state: RandomState, data: bool = True) -> None: ...


def random_state_of(preprocess: DevicePreprocess, sampler: torch.Generator | None) -> RandomState:
    """The data generator (shuffling, augmentation; on the device), the host generator of the augmentation's
    group sizes and the sampler's generator (streamed data) as a checkpoint stores them."""
    state: RandomState = {
        "data": preprocess.gen.get_state(),
        "augment_groups": json.dumps(preprocess.host_rng.bit_generator.state),
    }
    if sampler is not None:
        state["sampler"] = sampler.get_state()
    return state


def restore_random_state(
    state: RandomState, preprocess: DevicePreprocess, sampler: torch.Generator | None, data: bool = True
) -> None:
    """The inverse of `random_state_of`; `data=False` leaves the device generator alone (a state from another
    kind of device does not fit it)."""
    if data:
        preprocess.gen.set_state(state["data"].clone())
    preprocess.host_rng.bit_generator.state = json.loads(state["augment_groups"])
    if sampler is not None and "sampler" in state:
        sampler.set_state(state["sampler"].clone())


class _IndexedImages(Dataset):
    """Returns a whole batch per item: the sampler hands over a list of indices, gathered in one go."""

    def __init__(self, split: ImageSplit) -> None:
        self.split = split

    def __len__(self) -> int:
        return len(self.split)

    def __getitem__(self, indices: list[int]) -> Batch:
        idx = torch.as_tensor(indices)
        return self.split.images[idx], self.split.labels[idx]


class StreamBatches:
    """Host-memory dataset served by a DataLoader; each batch is copied to the device once."""

    placement = "stream"

    def __init__(
        self,
        splits: DatasetSplits,
        device: torch.device,
        batch_size: int,
        preprocess: DevicePreprocess,
        workers: int,
        pin_memory: bool,
        non_blocking: bool,
        seed: int,
        shard: Shard = ONE,
    ) -> None:
        """`shard`: a rank of a data-parallel run takes its part of each global batch
        (gpu_train_monitor.data.sharding)."""
        self.train = on_device(splits.train, torch.device("cpu"))
        self.val = shard_split(on_device(splits.val, torch.device("cpu")), shard, equal=False)
        self.shard = shard
        self.device = device
        self.batch_size = batch_size
        self.preprocess = preprocess
        self.workers, worker_notes = usable_workers(workers)
        self.pin_memory, self.non_blocking, copy_notes = transfer_policy(device.type, pin_memory, non_blocking)
        self.notes = copy_notes + worker_notes
        self.host_gen = torch.Generator().manual_seed(seed)

    def steps_per_epoch(self) -> int:
        return len(self.train) // (self.batch_size * self.shard.world)

    def set_batch_size(self, batch_size: int) -> None:
        self.batch_size = batch_size

    def loader(self, split: ImageSplit, shuffle: bool, drop_last: bool, batch_size: int | None = None) -> DataLoader:
        sampler: Sampler[list[int]]
        if shuffle and self.shard.world > 1:
            sampler = RankBatchSampler(len(split), self.host_gen, batch_size or self.batch_size, self.shard)
        else:
            base = RandomSampler(split, generator=self.host_gen) if shuffle else SequentialSampler(split)
            sampler = BatchSampler(base, batch_size or self.batch_size, drop_last=drop_last)
        return DataLoader(
            _IndexedImages(split),
            sampler=sampler,
            batch_size=None,
            num_workers=self.workers,
            pin_memory=self.pin_memory,
            persistent_workers=False,
        )

    def to_device(self, images: torch.Tensor, labels: torch.Tensor) -> Batch:
        asynchronous = self.non_blocking and images.is_pinned()  # a slice of a pinned batch is pinned too
        return images.to(self.device, non_blocking=asynchronous), labels.to(self.device, non_blocking=asynchronous)

    def train_epoch(self) -> BatchEpoch:
        return StreamEpoch(self)

    def random_state(self) -> RandomState:
        return random_state_of(self.preprocess, self.host_gen)

    def set_random_state(self, state: RandomState, data: bool = True) -> None:
        restore_random_state(state, self.preprocess, self.host_gen, data)

    def val_batches(self, batch_size: int | None = None) -> Iterator[Batch]:
        for images, labels in quiet_iter(self.loader(self.val, shuffle=False, drop_last=False, batch_size=batch_size)):
            images, labels = self.to_device(images, labels)
            yield self.preprocess(images, augment=False), labels


class StreamEpoch:
    """Host batches from the loader are kept until they were turned into device batches: a failure in
    the copy or the preprocessing leaves them here for the retry. (A failure inside the loader itself
    cannot be retried: the loader has moved past that batch's indices.) After the batch size shrank, each
    loader batch (built with the epoch's first size) is served in smaller pieces. The source gives it its
    `train` split, `batch_size`, `loader(...)`, `to_device(...)` and `preprocess`: a streamed text
    (gpu_train_monitor.data.text_batches) is served by the same epochs."""

    def __init__(self, source: StreamBatches) -> None:
        self.source = source
        self._open(source.batch_size)
        self.pending: Batch | None = None  # host images and labels not yet trained on
        self.previous: Batch | None = None  # `pending` before the last batch was cut from it
        self.copy_s = 0.0  # the last batch's copy to the device and its augmentation there

    def _open(self, loader_batch: int) -> None:
        loader = self.source.loader(self.source.train, shuffle=True, drop_last=True, batch_size=loader_batch)
        self.loader_batch = loader_batch
        self.loader_total = self.loader_left = len(loader)
        self.batches = quiet_iter(loader)

    def position(self) -> Position:
        pending = 0 if self.pending is None else int(self.pending[1].shape[0])
        return {"loader_batch": self.loader_batch, "pulled": self.loader_total - self.loader_left, "pending": pending}

    def seek(self, position: Position) -> None:
        """Take as many loader batches as the epoch had (host gathers only: no copy, no augmentation) and keep
        the images it had not trained on yet."""
        if position["loader_batch"] != self.loader_batch:  # the batch size shrank earlier in that run
            self._open(position["loader_batch"])
        keep = position["pending"]
        for _ in range(position["pulled"]):
            images, labels = next(self.batches)
            self.loader_left -= 1
            if keep:
                if self.pending is not None:
                    images, labels = torch.cat([self.pending[0], images]), torch.cat([self.pending[1], labels])
                self.pending = images[-keep:], labels[-keep:]
        self.previous = self.pending

    def __iter__(self) -> StreamEpoch:
        return self

    def remaining_samples(self) -> int:
        pending = 0 if self.pending is None else int(self.pending[1].shape[0])
        return pending + self.loader_left * self.loader_batch

    def give_back(self) -> None:
        self.pending = self.previous

    def __next__(self) -> Batch:
        source = self.source
        size = source.batch_size
        while self.pending is None or self.pending[1].shape[0] < size:
            try:  # StopIteration at the end (a short remainder is dropped)
                images, labels = next(self.batches)
            finally:
                # an error inside the loader (pinning or gathering the batch) has used up that batch's
                # indices: its images are lost to this epoch (the session counts them as skipped)
                self.loader_left = max(self.loader_left - 1, 0)
            if self.pending is not None and self.pending[1].shape[0]:
                images = torch.cat([self.pending[0], images])
                labels = torch.cat([self.pending[1], labels])
            self.pending = images, labels
        copying = time.perf_counter()
        images, labels = source.to_device(self.pending[0][:size], self.pending[1][:size])
        batch = source.preprocess(images, augment=True), labels
        self.copy_s = time.perf_counter() - copying
        self.previous = self.pending
        self.pending = self.pending[0][size:], self.pending[1][size:]  # only once the batch exists
        return batch


def quiet_iter(loader: DataLoader) -> Iterator[Batch]:
    """iter(loader) without torch's per-epoch warning about more workers than cores (said once, worded,
    by `gpu_train_monitor.data.transfer.usable_workers`)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"This DataLoader will create", category=UserWarning)
        return iter(loader)


def on_device(split: ImageSplit, device: torch.device) -> ImageSplit:
    """`split` with its tensors on `device` (itself when they are there already)."""
    if split.images.device == device:
        return split
    return ImageSplit(split.images.to(device), split.labels.to(device))
