"""MNIST and Fashion-MNIST from torchvision's on-disk layout, parsed from the IDX files directly.

Reading IDX ourselves (a 4-byte magic, big-endian dimensions, raw bytes) is a few lines, lets us
accept the .gz files as they come from the mirrors, and turns every defect into a message that names
the file, instead of torchvision's generic "Dataset not found or corrupted".
"""

from __future__ import annotations

import gzip
import math
import struct
import zlib
from pathlib import Path

import numpy as np
import torch

from ...base.errors import DatasetError
from ...base.text import Message
from .download import DATASET_FOLDERS, MNIST_FILES, download_dataset, missing_files_error, require_root
from .types import DatasetSplits, ImageSplit

IMAGE_MAGIC = 0x00000803  # unsigned bytes, 3 dimensions (count, rows, columns)
LABEL_MAGIC = 0x00000801  # unsigned bytes, 1 dimension (count)
SIDE = 28
NUM_CLASSES = 10
STATS = {"mnist": ((0.1307,), (0.3081,)), "fashion-mnist": ((0.2860,), (0.3530,))}


def load_mnist(root: Path, fashion: bool = False, download: bool = False) -> DatasetSplits:
    """Both splits of MNIST (or Fashion-MNIST) from `root`; the t10k split is the validation split."""
    name = "fashion-mnist" if fashion else "mnist"
    root = Path(root)
    raw = root / DATASET_FOLDERS[name]
    if not download:
        require_root(root, name)
    paths = _find_files(raw)
    if any(path is None for path in paths.values()):
        if not download:
            raise missing_files_error(name, root, [raw / stem for stem, path in paths.items() if path is None])
        download_dataset(name, root)
        paths = _find_files(raw)
        if any(path is None for path in paths.values()):
            raise missing_files_error(name, root, [raw / stem for stem, path in paths.items() if path is None])
    found = {stem: path for stem, path in paths.items() if path is not None}
    mean, std = STATS[name]
    return DatasetSplits(
        name=name,
        train=_read_split(found["train-images-idx3-ubyte"], found["train-labels-idx1-ubyte"]),
        val=_read_split(found["t10k-images-idx3-ubyte"], found["t10k-labels-idx1-ubyte"]),
        num_classes=NUM_CLASSES,
        mean=mean,
        std=std,
    )


def _find_files(raw: Path) -> dict[str, Path | None]:
    """Each expected file, preferring the uncompressed one, or None when neither form is there."""
    found: dict[str, Path | None] = {}
    for stem in MNIST_FILES:
        candidates = [raw / stem, raw / f"{stem}.gz"]
        found[stem] = next((path for path in candidates if path.is_file()), None)
    return found


def _read_split(images_path: Path, labels_path: Path) -> ImageSplit:
    images = read_idx(images_path, IMAGE_MAGIC)
    labels = read_idx(labels_path, LABEL_MAGIC)
    if images.shape[1:] != (SIDE, SIDE):
        raise DatasetError(
            Message(
                "{path}: images are {found}, expected {expected}",
                path=str(images_path),
                found=f"{images.shape[1]}x{images.shape[2]}",
                expected=f"{SIDE}x{SIDE}",
            )
        )
    if images.shape[0] == 0:
        raise DatasetError(Message("{path}: holds no images", path=str(images_path)))
    if images.shape[0] != labels.shape[0]:
        raise DatasetError(
            Message(
                "{images_path} holds {images} images but {labels_path} holds {labels} labels",
                images_path=str(images_path),
                images=images.shape[0],
                labels_path=str(labels_path),
                labels=labels.shape[0],
            )
        )
    if int(labels.max()) >= NUM_CLASSES:
        raise DatasetError(
            Message(
                "{path}: label {label} is outside 0..{last}",
                path=str(labels_path),
                label=int(labels.max()),
                last=NUM_CLASSES - 1,
            )
        )
    return ImageSplit(
        images=torch.from_numpy(images).unsqueeze(1).contiguous(), labels=torch.from_numpy(labels.astype(np.int64))
    )


def read_idx(path: Path, magic: int) -> np.ndarray:
    """The uint8 array of an IDX file (optionally gzipped), checked against `magic` and its own header."""
    data = _read_bytes(path)
    if len(data) < 4:
        raise DatasetError(
            Message("{path}: too short to be an IDX file ({size} bytes)", path=str(path), size=len(data))
        )
    (found,) = struct.unpack(">I", data[:4])
    if found != magic:
        raise DatasetError(
            Message(
                "{path}: bad magic number 0x{found:08x}, expected 0x{magic:08x} (not an MNIST IDX file of this kind)",
                path=str(path),
                found=found,
                magic=magic,
            )
        )
    ndim = magic & 0xFF
    header = 4 + 4 * ndim
    if len(data) < header:
        raise DatasetError(
            Message(
                "{path}: truncated header ({size} bytes, expected at least {header})",
                path=str(path),
                size=len(data),
                header=header,
            )
        )
    dims = struct.unpack(f">{ndim}I", data[4:header])
    expected, actual = math.prod(dims), len(data) - header
    if actual != expected:
        shape = "x".join(map(str, dims))
        if actual < expected:
            raise DatasetError(
                Message(
                    "{path}: truncated: the header says {shape} = {expected} bytes of data, found {actual}",
                    path=str(path),
                    shape=shape,
                    expected=expected,
                    actual=actual,
                )
            )
        raise DatasetError(
            Message(
                "{path}: has extra bytes: the header says {shape} = {expected} bytes of data, found {actual}",
                path=str(path),
                shape=shape,
                expected=expected,
                actual=actual,
            )
        )
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(dims).copy()  # copy: writable, owns memory


def _read_bytes(path: Path) -> bytes:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as stream:
                return stream.read()
        return path.read_bytes()
    except (OSError, EOFError, zlib.error) as error:  # gzip.BadGzipFile is an OSError
        raise DatasetError(Message("{path}: cannot be read ({error})", path=str(path), error=str(error))) from error
