"""The two data placements, behind one interface that yields ready-to-train device batches.

- `ResidentBatches`: the whole dataset lives on the device as uint8; each epoch is a device `randperm`,
  each batch an index into it. No host-to-device copy per step.
- `StreamBatches`: the ordinary DataLoader path from host memory (workers, pin_memory), one copy per
  batch with `.to(device, non_blocking=...)`. Batches are gathered by index in one go (a batch
  sampler), not image by image, which is what makes this path fast.

Both finish a batch the same way on the device (`DevicePreprocess`): random crop + flip for training,
uint8 -> float, normalise, channel expansion / resize for the model, channels_last.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

import torch
import torch.nn.functional as F
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler, SequentialSampler

from core.datasets.types import DatasetSplits, ImageSplit

Batch = tuple[torch.Tensor, torch.Tensor]


class DevicePreprocess:
    """uint8 batch on the device -> normalised float batch the model accepts, with optional augmentation."""

    def __init__(self, splits: DatasetSplits, device: torch.device, in_channels: int, input_size: int | None,
                 channels_last: bool, flip: bool, generator: torch.Generator) -> None:
        mean = torch.tensor(splits.mean, device=device).view(1, -1, 1, 1)
        std = torch.tensor(splits.std, device=device).view(1, -1, 1, 1)
        self.scale = 1.0 / (255.0 * std)  # x * scale + bias == (x / 255 - mean) / std
        self.bias = -mean / std
        self.in_channels = in_channels
        self.input_size = input_size
        self.channels_last = channels_last
        self.flip = flip
        self.pad = max(splits.image_size[0] // 8, 1)
        self.gen = generator

    def __call__(self, images: torch.Tensor, augment: bool) -> torch.Tensor:
        if augment:
            images = self._random_crop(images)
            if self.flip:
                images = self._random_flip(images)
        x = images.float() * self.scale + self.bias
        if x.shape[1] != self.in_channels:
            x = x.expand(-1, self.in_channels, -1, -1)
        if self.input_size is not None and x.shape[-1] < self.input_size:
            x = F.interpolate(x, size=(self.input_size, self.input_size), mode="bilinear", align_corners=False)
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        return x

    def _random_crop(self, images: torch.Tensor) -> torch.Tensor:
        """Pad by 1/8 of the side (zeros) and crop back at a random offset per image, all on the device."""
        n, c, h, w = images.shape
        p = self.pad
        padded = F.pad(images, (p, p, p, p))
        dev = images.device
        dy = torch.randint(0, 2 * p + 1, (n, 1), generator=self.gen, device=dev)
        dx = torch.randint(0, 2 * p + 1, (n, 1), generator=self.gen, device=dev)
        rows = (dy + torch.arange(h, device=dev)).view(n, 1, h, 1)
        cols = (dx + torch.arange(w, device=dev)).view(n, 1, 1, w)
        batch = torch.arange(n, device=dev).view(n, 1, 1, 1)
        chans = torch.arange(c, device=dev).view(1, c, 1, 1)
        return padded[batch, chans, rows, cols]

    def _random_flip(self, images: torch.Tensor) -> torch.Tensor:
        mask = torch.rand(images.shape[0], generator=self.gen, device=images.device) < 0.5
        return torch.where(mask.view(-1, 1, 1, 1), images.flip(3), images)


class BatchSource(Protocol):
    """What the training loop needs from a placement."""

    placement: str
    batch_size: int

    def steps_per_epoch(self) -> int: ...
    def train_epoch(self) -> Iterator[Batch]: ...
    def val_batches(self) -> Iterator[Batch]: ...
    def set_batch_size(self, batch_size: int) -> None: ...


class ResidentBatches:
    """The dataset lives on the device; shuffling, augmentation and normalisation run there too."""

    placement = "resident"

    def __init__(self, splits: DatasetSplits, device: torch.device, batch_size: int,
                 preprocess: DevicePreprocess, generator: torch.Generator) -> None:
        self.train = _on(splits.train, device)
        self.val = _on(splits.val, device)
        self.batch_size = batch_size
        self.preprocess = preprocess
        self.gen = generator

    def steps_per_epoch(self) -> int:
        return len(self.train) // self.batch_size

    def set_batch_size(self, batch_size: int) -> None:
        self.batch_size = batch_size

    def train_epoch(self) -> Iterator[Batch]:
        order = torch.randperm(len(self.train), generator=self.gen, device=self.train.images.device)
        start = 0
        while start + self.batch_size <= len(order):  # re-read: the batch may shrink mid-epoch (OOM)
            idx = order[start:start + self.batch_size]
            start += self.batch_size
            yield self.preprocess(self.train.images[idx], augment=True), self.train.labels[idx]

    def val_batches(self) -> Iterator[Batch]:
        for start in range(0, len(self.val), self.batch_size):
            end = start + self.batch_size
            yield self.preprocess(self.val.images[start:end], augment=False), self.val.labels[start:end]


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

    def __init__(self, splits: DatasetSplits, device: torch.device, batch_size: int, preprocess: DevicePreprocess,
                 workers: int, pin_memory: bool, non_blocking: bool, seed: int) -> None:
        self.train = _on(splits.train, torch.device("cpu"))
        self.val = _on(splits.val, torch.device("cpu"))
        self.device = device
        self.batch_size = batch_size
        self.preprocess = preprocess
        self.workers = workers
        self.pin_memory = pin_memory and device.type == "cuda"
        self.non_blocking = non_blocking and device.type != "cpu"
        self.host_gen = torch.Generator().manual_seed(seed)

    def steps_per_epoch(self) -> int:
        return len(self.train) // self.batch_size

    def set_batch_size(self, batch_size: int) -> None:
        self.batch_size = batch_size

    def _loader(self, split: ImageSplit, shuffle: bool, drop_last: bool) -> DataLoader:
        base = RandomSampler(split, generator=self.host_gen) if shuffle else SequentialSampler(split)
        return DataLoader(_IndexedImages(split), sampler=BatchSampler(base, self.batch_size, drop_last=drop_last),
                          batch_size=None, num_workers=self.workers, pin_memory=self.pin_memory,
                          persistent_workers=False)

    def train_epoch(self) -> Iterator[Batch]:
        for images, labels in self._loader(self.train, shuffle=True, drop_last=True):
            images = images.to(self.device, non_blocking=self.non_blocking)
            labels = labels.to(self.device, non_blocking=self.non_blocking)
            # The loader was built with the epoch's batch size; after an OOM shrink, split what it gives.
            for part_images, part_labels in zip(images.split(self.batch_size), labels.split(self.batch_size)):
                yield self.preprocess(part_images, augment=True), part_labels

    def val_batches(self) -> Iterator[Batch]:
        for images, labels in self._loader(self.val, shuffle=False, drop_last=False):
            images = images.to(self.device, non_blocking=self.non_blocking)
            labels = labels.to(self.device, non_blocking=self.non_blocking)
            yield self.preprocess(images, augment=False), labels


def _on(split: ImageSplit, device: torch.device) -> ImageSplit:
    if split.images.device == device:
        return split
    return ImageSplit(split.images.to(device), split.labels.to(device))
