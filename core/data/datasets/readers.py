"""What the readers of a user's own data share (an image folder, a dataset from `module:factory`): the
seeded validation part held out when the data comes without one, and per-channel statistics.
"""

from __future__ import annotations

import torch

VAL_FRACTION = 0.1  # share of the images held out for validation when the data has no validation split


def val_count(count: int, val_fraction: float = VAL_FRACTION) -> int:
    """Images held out of `count`: at least one when there are two or more, never all of them."""
    return 0 if count < 2 else min(count - 1, max(1, round(count * val_fraction)))


def held_out(count: int, seed: int, val_fraction: float = VAL_FRACTION) -> set[int]:
    """The indices of a seeded random validation part of `count` items (the seed picks which, not how many)."""
    order = torch.randperm(count, generator=torch.Generator().manual_seed(seed)).tolist()
    return set(order[: val_count(count, val_fraction)])


def channel_stats(images: torch.Tensor) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Per-channel mean and std of uint8 (N, C, H, W) images in 0..1 units, in chunks so a large split needs
    no float copy of itself. A flat channel gets the std of one grey level, so nothing divides by 0."""
    channels = images.shape[1]
    total = torch.zeros(channels, dtype=torch.float64)
    squares = torch.zeros(channels, dtype=torch.float64)
    for chunk in images.split(1024):
        values = chunk.to(torch.float64) / 255.0
        total += values.sum(dim=(0, 2, 3))
        squares += (values * values).sum(dim=(0, 2, 3))
    count = images.shape[0] * images.shape[2] * images.shape[3]
    mean = total / count
    std = (squares / count - mean * mean).clamp_min(0.0).sqrt().clamp_min(1.0 / 255.0)
    return tuple(round(float(v), 6) for v in mean), tuple(round(float(v), 6) for v in std)
