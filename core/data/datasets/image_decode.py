"""Decoding image files into uint8 RGB pixels, for the image folder loader (gpu_train_monitor.data.datasets.imagefolder)
and for PIL images a custom dataset returns (gpu_train_monitor.data.datasets.custom_items).

Its own module because turning any file Pillow reads (16-bit, float, palette...) into 8-bit RGB, safely
(regular files only), is a job apart from walking the folder and deciding which file is in which split.
"""

from __future__ import annotations

import os
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO

import numpy as np
import torch
from PIL import Image

from ...base.errors import DatasetError
from ...base.text import Message
from .types import ImageSplit

Sample = tuple[str, int]  # (path, class index), as torchvision's make_dataset returns them


def decode_samples(samples: list[Sample], image_size: int) -> ImageSplit:
    images = torch.empty((len(samples), 3, image_size, image_size), dtype=torch.uint8)
    labels = torch.tensor([index for _, index in samples], dtype=torch.int64)

    def load(i: int) -> None:
        images[i] = torch.from_numpy(read_image(Path(samples[i][0]), image_size)).permute(2, 0, 1)

    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:  # PIL decodes without the GIL
        list(pool.map(load, range(len(samples))))
    return ImageSplit(images=images, labels=labels)


def read_image(path: Path, image_size: int) -> np.ndarray:
    """(H, W, 3) uint8: RGB, resized (bilinear) only when it is not already `image_size` square."""
    try:
        with _open_regular(path) as file, Image.open(file) as opened:
            image = to_rgb(opened)
        if image.size != (image_size, image_size):
            image = image.resize((image_size, image_size), Image.Resampling.BILINEAR)
        return np.array(image, dtype=np.uint8)  # a writable copy: torch warns on read-only arrays
    except (
        OSError,
        ValueError,
        SyntaxError,
        Image.DecompressionBombError,
    ) as error:  # UnidentifiedImageError is an OSError
        raise DatasetError(
            Message("{path}: not a readable image ({error})", path=str(path), error=str(error))
        ) from error


def _open_regular(path: Path) -> BinaryIO:
    """Open `path` only if it is a regular file: opening a FIFO for reading waits for a writer forever.

    The scan already left non-regular files out; this holds when one is swapped in after the scan.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise DatasetError(Message("{path}: not a regular file", path=str(path)))
    return os.fdopen(fd, "rb")


def to_rgb(image: Image.Image) -> Image.Image:
    """8-bit RGB. Deeper images are scaled, not clipped (Pillow's own conversion clips them to 255 or 0).

    Integer images ("I;16", "I") with values in 0..65535 are 16-bit: the top 8 bits are kept (value >> 8),
    as an image viewer shows them. Float images ("F") in 0..1 are scaled by 255. Other integer or float
    images are stretched from their own minimum..maximum to 0..255 (a flat one becomes black); NaN counts
    as the minimum. 8-bit images are converted exactly as Pillow does.
    """
    if image.mode == "F":
        return Image.fromarray(_float_to_8bit(np.asarray(image, dtype=np.float64))).convert("RGB")
    if image.mode.startswith("I"):
        return Image.fromarray(_int_to_8bit(np.asarray(image).astype(np.int64))).convert("RGB")
    return image.convert("RGB")


def _int_to_8bit(values: np.ndarray) -> np.ndarray:
    if values.min() >= 0 and values.max() <= 0xFFFF:
        return (values >> 8).astype(np.uint8)
    return _stretch(values.astype(np.float64))


def _float_to_8bit(values: np.ndarray) -> np.ndarray:
    finite = values[np.isfinite(values)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    values = np.clip(np.nan_to_num(values, nan=low, posinf=high, neginf=low), low, high)
    return np.rint(values * 255.0).astype(np.uint8) if low >= 0.0 and high <= 1.0 else _stretch(values)


def _stretch(values: np.ndarray) -> np.ndarray:
    low, high = float(values.min()), float(values.max())
    scale = 255.0 / (high - low) if high > low else 0.0  # a flat image becomes black
    return np.rint((values - low) * scale).astype(np.uint8)
