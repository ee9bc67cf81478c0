"""A folder of class sub-folders (torchvision's ImageFolder layout), decoded once into uint8 tensors.

Images are decoded and resized up front so that both placements see the same whole-split tensors as
the built-in datasets: `resident` can upload them in one copy, and no decoding runs per step.
Class discovery and file filtering are torchvision's, so a folder that works with `ImageFolder`
works here with the same class numbers.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from torchvision.datasets.folder import IMG_EXTENSIONS, find_classes, make_dataset

from core.datasets.types import DatasetSplits, ImageSplit
from core.errors import DatasetError

Sample = tuple[str, int]  # (path, class index), as make_dataset returns them


def load_imagefolder(root: Path, image_size: int = 32, val_fraction: float = 0.1, seed: int = 0) -> DatasetSplits:
    """Splits from `root/<class>/<image>`, or from `root/train/<class>/...` and `root/val/<class>/...`.

    Without a train/val pair, a seeded random `val_fraction` of the images (at least one when there
    are two or more) is held out; with only `root/train`, that folder is split the same way.
    """
    if image_size < 1:
        raise ValueError(f"image_size must be at least 1, got {image_size}")
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be between 0 and 1, got {val_fraction}")
    root = Path(root)
    if not root.is_dir():
        raise DatasetError(f"image folder {root} does not exist" if not root.exists() else f"image folder {root} is not a folder")
    train_dir, val_dir = root / "train", root / "val"
    if train_dir.is_dir() and val_dir.is_dir():
        classes = _classes(train_dir)
        val_classes = _classes(val_dir)
        if val_classes != classes:
            only_train, only_val = sorted(set(classes) - set(val_classes)), sorted(set(val_classes) - set(classes))
            raise DatasetError(
                f"{train_dir} and {val_dir} must have the same class folders "
                f"(only in train: {', '.join(only_train) or 'none'}; only in val: {', '.join(only_val) or 'none'})"
            )
        train_samples = _samples(train_dir, classes)
        val_samples = _samples(val_dir, classes, allow_empty=True)
    else:
        source = train_dir if train_dir.is_dir() else root
        classes = _classes(source)
        train_samples, val_samples = _hold_out(_samples(source, classes), val_fraction, seed)
    train = _decode(train_samples, image_size)
    mean, std = _channel_stats(train.images)
    return DatasetSplits(
        name="imagefolder",
        train=train,
        val=_decode(val_samples, image_size),
        num_classes=len(classes),
        mean=mean,
        std=std,
    )


def _layout_hint(folder: Path) -> str:
    return (
        f"expected {folder}/<class name>/<image> (for example {folder}/cat/001.png), "
        f"or {folder}/train/<class name>/... and {folder}/val/<class name>/...; "
        f"image types: {', '.join(IMG_EXTENSIONS)}"
    )


def _classes(folder: Path) -> list[str]:
    try:
        classes, _ = find_classes(folder)
    except FileNotFoundError as error:
        raise DatasetError(f"no class folders in {folder}: {_layout_hint(folder)}") from error
    return classes


def _samples(folder: Path, classes: list[str], allow_empty: bool = False) -> list[Sample]:
    class_to_idx = {name: index for index, name in enumerate(classes)}
    try:
        samples = make_dataset(folder, class_to_idx, extensions=IMG_EXTENSIONS, allow_empty=True)
    except OSError as error:
        raise DatasetError(f"cannot list the images in {folder}: {error}") from error
    used = {index for _, index in samples}
    if not allow_empty and len(used) < len(classes):
        empty = [name for name, index in class_to_idx.items() if index not in used]
        raise DatasetError(f"no images in the class folders {', '.join(empty)} of {folder}: {_layout_hint(folder)}")
    return samples


def _hold_out(samples: list[Sample], val_fraction: float, seed: int) -> tuple[list[Sample], list[Sample]]:
    """A seeded random split; both parts keep the folder order so that the result is reproducible."""
    count = len(samples)
    val_count = 0 if count < 2 else min(count - 1, max(1, round(count * val_fraction)))
    order = torch.randperm(count, generator=torch.Generator().manual_seed(seed)).tolist()
    val_indices = set(order[:val_count])
    train = [sample for i, sample in enumerate(samples) if i not in val_indices]
    val = [sample for i, sample in enumerate(samples) if i in val_indices]
    return train, val


def _decode(samples: list[Sample], image_size: int) -> ImageSplit:
    images = torch.empty((len(samples), 3, image_size, image_size), dtype=torch.uint8)
    labels = torch.tensor([index for _, index in samples], dtype=torch.int64)

    def load(i: int) -> None:
        images[i] = torch.from_numpy(_read_image(Path(samples[i][0]), image_size)).permute(2, 0, 1)

    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:  # PIL decodes without the GIL
        list(pool.map(load, range(len(samples))))
    return ImageSplit(images=images, labels=labels)


def _read_image(path: Path, image_size: int) -> np.ndarray:
    """(H, W, 3) uint8: RGB, resized (bilinear) only when it is not already `image_size` square."""
    try:
        with Image.open(path) as opened:
            image = opened.convert("RGB")
        if image.size != (image_size, image_size):
            image = image.resize((image_size, image_size), Image.Resampling.BILINEAR)
        return np.array(image, dtype=np.uint8)  # a writable copy: torch warns on read-only arrays
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as error:  # UnidentifiedImageError is an OSError
        raise DatasetError(f"{path}: not a readable image ({error})") from error


def _channel_stats(images: torch.Tensor) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Per-channel mean and std in 0..1 units, in chunks so a large split needs no float copy of itself."""
    total = torch.zeros(3, dtype=torch.float64)
    squares = torch.zeros(3, dtype=torch.float64)
    for chunk in images.split(1024):
        values = chunk.to(torch.float64) / 255.0
        total += values.sum(dim=(0, 2, 3))
        squares += (values * values).sum(dim=(0, 2, 3))
    count = images.shape[0] * images.shape[2] * images.shape[3]
    mean = total / count
    std = (squares / count - mean * mean).clamp_min(0.0).sqrt().clamp_min(1.0 / 255.0)  # a flat channel must not divide by 0
    return tuple(round(float(v), 6) for v in mean), tuple(round(float(v), 6) for v in std)
