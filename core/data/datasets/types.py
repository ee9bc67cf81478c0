"""What every dataset reader returns: whole splits as uint8 tensors.

Both placements start from these: `resident` uploads them to the device once, `stream` serves batches
from host memory through a DataLoader. Normalisation and augmentation happen later, on the device.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class ImageSplit:
    """One split: `images` uint8 (N, C, H, W) and `labels` int64 (N,), on one device."""

    images: torch.Tensor
    labels: torch.Tensor

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    @property
    def nbytes(self) -> int:
        return self.images.nelement() * self.images.element_size() + self.labels.nelement() * self.labels.element_size()


@dataclass(frozen=True)
class DatasetSplits:
    """A dataset ready for training: train and validation splits plus what the model needs to know."""

    name: str
    train: ImageSplit
    val: ImageSplit
    num_classes: int
    mean: tuple[float, ...]  # per channel, in 0..1 units
    std: tuple[float, ...]

    @property
    def channels(self) -> int:
        return int(self.train.images.shape[1])

    @property
    def image_size(self) -> tuple[int, int]:
        return int(self.train.images.shape[2]), int(self.train.images.shape[3])

    @property
    def nbytes(self) -> int:
        return self.train.nbytes + self.val.nbytes
