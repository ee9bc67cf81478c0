"""A learnable, CIFAR-shaped dataset generated from a seed, directly on the target device.

Each class has a smooth random prototype (low-resolution noise upsampled to 32x32); an image is its
class prototype at a random contrast plus pixel noise. Smooth prototypes survive random crops and
flips, so the loss falls visibly within a few hundred steps, and nothing has to be downloaded.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .types import DatasetSplits, ImageSplit

NUM_CLASSES = 10
CHANNELS = 3
SIZE = 32
_CHUNK = 8192  # images generated per chunk, to bound the float32 temporaries


def synthetic_bytes(train_samples: int) -> int:
    """Bytes the whole dataset (train + val, images + labels) occupies, known before generating it."""
    total = train_samples + val_samples(train_samples)
    return total * (CHANNELS * SIZE * SIZE + 8)


def val_samples(train_samples: int) -> int:
    return max(256, train_samples // 5)


def make_synthetic(train_samples: int, seed: int, device: torch.device) -> DatasetSplits:
    """Generate train and validation splits as uint8 tensors on `device`."""
    gen = torch.Generator(device=device).manual_seed(seed)
    coarse = torch.rand(NUM_CLASSES, CHANNELS, 4, 4, generator=gen, device=device)
    prototypes = F.interpolate(coarse, size=(SIZE, SIZE), mode="bicubic", align_corners=False)
    prototypes = (prototypes - prototypes.mean(dim=(1, 2, 3), keepdim=True)) * 2.0  # about -1..1
    train = _make_split(train_samples, prototypes, gen, device)
    val = _make_split(val_samples(train_samples), prototypes, gen, device)
    return DatasetSplits(
        name="synthetic", train=train, val=val, num_classes=NUM_CLASSES, mean=(0.5,) * CHANNELS, std=(0.25,) * CHANNELS
    )


def _make_split(count: int, prototypes: torch.Tensor, gen: torch.Generator, device: torch.device) -> ImageSplit:
    labels = torch.randint(0, NUM_CLASSES, (count,), generator=gen, device=device)
    images = torch.empty(count, CHANNELS, SIZE, SIZE, dtype=torch.uint8, device=device)
    for start in range(0, count, _CHUNK):
        idx = labels[start : start + _CHUNK]
        n = idx.shape[0]
        contrast = 0.5 + torch.rand(n, 1, 1, 1, generator=gen, device=device)
        noise = torch.randn(n, CHANNELS, SIZE, SIZE, generator=gen, device=device)
        pixels = 0.5 + 0.22 * contrast * prototypes[idx] + 0.12 * noise
        images[start : start + n] = (pixels.clamp_(0.0, 1.0) * 255.0).round_().to(torch.uint8)
    return ImageSplit(images=images, labels=labels.to(torch.int64))
