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


@dataclass(frozen=True)
class TokenSplit:
    """One split of a text: its token ids (uint8: a text's bytes, vocabulary 256) in one 1-d tensor, cut into
    sequences of `seq_len` tokens. Each sequence's targets are the same tokens one position on, so a sequence
    takes `seq_len + 1` tokens and its length counts the sequences the split holds (the samples of a text run)."""

    tokens: torch.Tensor
    seq_len: int

    def __len__(self) -> int:
        return max((int(self.tokens.shape[0]) - 1) // self.seq_len, 0)

    @property
    def nbytes(self) -> int:
        return self.tokens.nelement() * self.tokens.element_size()


@dataclass(frozen=True)
class TextSplits:
    """A text ready for training: train and validation token splits; `num_classes` is the vocabulary."""

    name: str
    train: TokenSplit
    val: TokenSplit
    num_classes: int = 256
    channels: int = 1  # what a checkpoint records of the data, with its name and classes

    @property
    def nbytes(self) -> int:
        return self.train.nbytes + self.val.nbytes
