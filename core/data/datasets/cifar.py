"""CIFAR-10 from torchvision's on-disk layout (the official "python version" pickle batches).

torchvision's own reader insists on the md5 sums of the official files; reading the batches here
accepts any honest copy (re-pickled, subsets for tests) and names the file when one is damaged. The
unpickler only resolves the few numpy names an array needs, so a batch file cannot run code.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ...base.errors import DatasetError
from ...base.text import Message
from .download import CIFAR10_FOLDER, download_dataset, missing_files_error, require_root
from .types import DatasetSplits, ImageSplit

NUM_CLASSES = 10
SHAPE = (3, 32, 32)  # each row of b"data" is the red plane, then green, then blue, row-major
MEAN = (0.4914, 0.4822, 0.4465)
STD = (0.2470, 0.2435, 0.2616)
TRAIN_BATCHES = tuple(f"data_batch_{i}" for i in range(1, 6))
TEST_BATCH = "test_batch"
META = "batches.meta"


def load_cifar10(root: Path, download: bool = False) -> DatasetSplits:
    """Both splits of CIFAR-10 from `root/cifar-10-batches-py`; the test batch is the validation split."""
    root = Path(root)
    folder = root / CIFAR10_FOLDER
    if not download:
        require_root(root, "cifar10")
    required = [folder / name for name in (*TRAIN_BATCHES, TEST_BATCH)]
    missing = [path for path in required if not path.is_file()]
    if missing:
        if not download:
            raise missing_files_error("cifar10", root, missing)
        download_dataset("cifar10", root)
        missing = [path for path in required if not path.is_file()]
        if missing:
            raise missing_files_error("cifar10", root, missing)
    if (folder / META).is_file():  # optional: only class names live there, but a damaged one is reported
        _check_meta(folder / META)
    return DatasetSplits(
        name="cifar10",
        train=_concat([_read_batch(folder / name) for name in TRAIN_BATCHES]),
        val=_read_batch(folder / TEST_BATCH),
        num_classes=NUM_CLASSES,
        mean=MEAN,
        std=STD,
    )


class _ArrayUnpickler(pickle.Unpickler):
    """Resolves only what pickled numpy arrays and Python 2 strings need; anything else is refused."""

    ALLOWED = {
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.multiarray", "_reconstruct"),  # the official files (numpy 1.x)
        ("numpy._core.multiarray", "_reconstruct"),  # re-pickled with numpy 2
        ("numpy.core.numeric", "_frombuffer"),  # pickle protocol 5
        ("numpy._core.numeric", "_frombuffer"),
        ("_codecs", "encode"),  # bytes pickled by Python 3 at protocol 2
    }

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(
                f"refusing to load {module}.{name}: a CIFAR-10 batch holds only arrays and lists"
            )
        return super().find_class(module, name)


def _unpickle(path: Path) -> dict[bytes, Any]:
    try:
        with path.open("rb") as stream:
            content = _ArrayUnpickler(stream, encoding="bytes").load()
    except OSError as error:
        raise DatasetError(Message("{path}: cannot be read ({error})", path=str(path), error=str(error))) from error
    except Exception as error:  # garbage makes pickle raise nearly anything (EOFError, KeyError, ValueError, ...)
        raise DatasetError(
            Message(
                "{path}: not a CIFAR-10 python batch, or damaged ({error})",
                path=str(path),
                error=f"{type(error).__name__}: {error}",
            )
        ) from error
    if not isinstance(content, dict):
        raise DatasetError(
            Message(
                "{path}: not a CIFAR-10 python batch (holds a {type}, expected a dict)",
                path=str(path),
                type=type(content).__name__,
            )
        )
    return content


def _read_batch(path: Path) -> ImageSplit:
    content = _unpickle(path)
    data, labels = content.get(b"data"), content.get(b"labels")
    if not isinstance(data, np.ndarray) or labels is None:
        raise DatasetError(
            Message("{path}: not a CIFAR-10 python batch (no b'data' array and b'labels' list)", path=str(path))
        )
    width = SHAPE[0] * SHAPE[1] * SHAPE[2]
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != width or data.shape[0] == 0:
        raise DatasetError(
            Message(
                "{path}: b'data' is {dtype} {shape}, expected uint8 (N, {width}) with N > 0",
                path=str(path),
                dtype=str(data.dtype),
                shape=str(tuple(data.shape)),
                width=width,
            )
        )
    try:
        label_array = np.asarray(labels)
    except (TypeError, ValueError) as error:
        raise DatasetError(
            Message("{path}: b'labels' is not a list of class numbers ({error})", path=str(path), error=str(error))
        ) from error
    if label_array.shape != (data.shape[0],) or label_array.dtype.kind not in "iu":
        raise DatasetError(
            Message(
                "{path}: {images} images but b'labels' is {dtype} {shape}",
                path=str(path),
                images=data.shape[0],
                dtype=str(label_array.dtype),
                shape=str(label_array.shape),
            )
        )
    if label_array.min() < 0 or label_array.max() >= NUM_CLASSES:
        bad = int(label_array.min()) if label_array.min() < 0 else int(label_array.max())
        raise DatasetError(
            Message("{path}: label {label} is outside 0..{last}", path=str(path), label=bad, last=NUM_CLASSES - 1)
        )
    images = torch.from_numpy(np.ascontiguousarray(data).reshape(-1, *SHAPE).copy())
    return ImageSplit(images=images, labels=torch.from_numpy(label_array.astype(np.int64)))


def _check_meta(path: Path) -> None:
    names = _unpickle(path).get(b"label_names")
    if not isinstance(names, list) or len(names) != NUM_CLASSES:
        raise DatasetError(
            Message("{path}: expected b'label_names' with {classes} class names", path=str(path), classes=NUM_CLASSES)
        )


def _concat(splits: list[ImageSplit]) -> ImageSplit:
    return ImageSplit(
        images=torch.cat([split.images for split in splits]).contiguous(),
        labels=torch.cat([split.labels for split in splits]),
    )
