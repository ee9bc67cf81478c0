"""The two data placements, behind one interface that yields ready-to-train device batches.

- `ResidentBatches`: the whole dataset lives on the device as uint8; each epoch augments and shuffles
  the whole training set there at once, and each batch is a slice of it. No host-to-device copy per step.
- `StreamBatches`: the ordinary DataLoader path from host memory (workers, pin_memory), one copy per
  batch with `.to(device, non_blocking=...)`. Batches are gathered by index in one go (a batch
  sampler), not image by image, which is what makes this path fast.

Both use the same device-side steps (`DevicePreprocess`): random crop + flip for training (per batch
when streaming, per epoch when resident), then uint8 -> float, normalise, channel expansion / resize
for the model, channels_last.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

import numpy as np
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
        # group sizes of the augmentation are drawn on the host: no device sync (seeded from `generator`)
        self.host_rng = np.random.default_rng(int(generator.initial_seed()))

    def __call__(self, images: torch.Tensor, augment: bool) -> torch.Tensor:
        """A uint8 batch -> the model's input; `augment` crops and flips it first (per batch)."""
        return self.to_model_input(self.augment(images) if augment else images)

    def augment(self, images: torch.Tensor) -> torch.Tensor:
        """Random crop (zero padding of 1/8 of the side) and, where it suits the data, a horizontal flip
        per image, keeping the images' order: a streamed batch. Each crop is one window of an
        `unfold` view of the padded batch, gathered for all images at once."""
        n, c, h, w = images.shape
        p = self.pad
        windows = F.pad(images, (p, p, p, p)).unfold(2, h, 1).unfold(3, w, 1)  # (n, c, 2p+1, 2p+1, h, w)
        dy = torch.randint(0, 2 * p + 1, (n,), generator=self.gen, device=images.device)
        dx = torch.randint(0, 2 * p + 1, (n,), generator=self.gen, device=images.device)
        out = windows.permute(0, 2, 3, 1, 4, 5)[torch.arange(n, device=images.device), dy, dx]
        return random_flip(out, self.gen) if self.flip else out

    def augment_shuffled(self, images: torch.Tensor, out: torch.Tensor | None = None
                         ) -> tuple[torch.Tensor, torch.Tensor]:
        """The same augmentation for a whole set (a resident training set, once per epoch): returns
        (augmented, order) with augmented[i] made from images[order[i]], grouped by crop; see
        `augment_shuffled`. `out` is reused when given: no fresh whole-set allocation per epoch."""
        return augment_shuffled(images, self.pad, self.flip, self.gen, self.host_rng, out)

    def to_model_input(self, images: torch.Tensor) -> torch.Tensor:
        # addcmul, not `x * scale + bias`: on the CPU the broadcast multiply by a (1, C, 1, 1) tensor took
        # 60x longer here (7.2 s against 0.12 s for 50,000 CIFAR images)
        x = torch.addcmul(self.bias, images.float(), self.scale)
        if x.shape[1] != self.in_channels:
            x = x.expand(-1, self.in_channels, -1, -1)
        if self.input_size is not None and x.shape[-1] < self.input_size:
            x = F.interpolate(x, size=(self.input_size, self.input_size), mode="bilinear", align_corners=False)
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        return x


def augment_shuffled(images: torch.Tensor, pad: int, flip: bool, gen: torch.Generator,
                     host_rng: np.random.Generator, out: torch.Tensor | None = None
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """Random crop (shift by up to `pad` pixels, zeros shifted in) and optional flip of every image.

    Each image draws one of (2 * pad + 1)^2 shifts (x2 with flip). The images are shuffled, cut into
    contiguous groups of random sizes, one group per shift, and each group is copied with one shifted
    slice: no per-pixel gather and no padded copy, which is what makes a whole-set pass cheap
    (airbench's idea). The group sizes are drawn on the host (`host_rng`), so nothing here waits for
    the device. Returns (out, order) with out[i] = aug(images[order[i]]): images sharing a crop are
    neighbours in `out`, so take batches through a second random permutation.
    """
    n, _, h, w = images.shape
    side = 2 * pad + 1
    kinds = side * side * (2 if flip else 1)
    first = torch.randperm(n, generator=gen, device=images.device)
    out = torch.empty_like(images) if out is None else out
    counts = host_rng.multinomial(n, np.full(kinds, 1.0 / kinds)).tolist()
    start = 0
    for kind, count in enumerate(counts):
        if not count:
            continue
        flipped, shift = divmod(kind, side * side)
        dy, dx = shift // side - pad, shift % side - pad
        src = images.index_select(0, first[start:start + count])
        if flipped:
            src = src.flip(3)
        dst = out[start:start + count]
        # dst[y, x] = src[y + dy, x + dx] where that pixel exists; the strips shifted in are zeros
        dst[:, :, max(0, -dy):h - max(0, dy), max(0, -dx):w - max(0, dx)] = \
            src[:, :, max(0, dy):h - max(0, -dy), max(0, dx):w - max(0, -dx)]
        if dy > 0:
            dst[:, :, h - dy:, :] = 0
        elif dy < 0:
            dst[:, :, :-dy, :] = 0
        if dx > 0:
            dst[:, :, :, w - dx:] = 0
        elif dx < 0:
            dst[:, :, :, :-dx] = 0
        start += count
    return out, first


def random_flip(images: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Mirror a random half of the images left to right."""
    mask = torch.rand(images.shape[0], generator=gen, device=images.device) < 0.5
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
        self._augmented: torch.Tensor | None = None  # this epoch's augmented training images

    def steps_per_epoch(self) -> int:
        return len(self.train) // self.batch_size

    def set_batch_size(self, batch_size: int) -> None:
        self.batch_size = batch_size

    def train_epoch(self) -> Iterator[Batch]:
        # The whole set is augmented once per epoch on the device into a buffer kept across epochs
        # (airbench); each batch is then a gather of a random slice of it, plus normalisation.
        self._augmented, order = self.preprocess.augment_shuffled(self.train.images, self._augmented)
        mix = torch.randperm(len(order), generator=self.gen, device=order.device)
        labels = self.train.labels[order]
        start = 0
        while start + self.batch_size <= len(mix):  # re-read: the batch may shrink mid-epoch (OOM)
            end = start + self.batch_size
            idx = mix[start:end]
            yield self.preprocess.to_model_input(self._augmented.index_select(0, idx)), labels.index_select(0, idx)
            start = end

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
