"""Dataset loading: one entry point that reads the config and returns uint8 splits.

`synthetic` and `synthetic-text` are generated directly where they will live (on the device for the resident
placement); the file formats, a text file (`text:PATH`, `gpu_train_monitor.data.datasets.text`) and your own dataset
(`package.module:factory`, `gpu_train_monitor.data.datasets.custom`), are read into host memory, from which either
placement takes them. A text is token ids (`TextSplits`), everything else images (`DatasetSplits`).
"""

from __future__ import annotations

from pathlib import Path

import torch

from ...base.user_code import is_spec
from ...config.run_config import RunConfig
from ...config.sequences import SYNTHETIC_TEXT, VOCAB, is_text_dataset, text_file
from .synthetic import make_synthetic, synthetic_bytes
from .types import DatasetSplits, ImageSplit, TextSplits, TokenSplit

__all__ = [
    "DatasetSplits",
    "ImageSplit",
    "TextSplits",
    "TokenSplit",
    "dataset_shape",
    "default_data_dir",
    "load_dataset",
    "resident_bytes",
    "synthetic_bytes",
]

# channels, height, width, classes, training images, validation images of the fixed-format datasets
# (their standard train splits; the test split validates)
_SHAPES = {
    "cifar10": (3, 32, 32, 10, 50_000, 10_000),
    "mnist": (1, 28, 28, 10, 60_000, 10_000),
    "fashion-mnist": (1, 28, 28, 10, 60_000, 10_000),
}


def default_data_dir() -> Path:
    """Where datasets live unless `--data-dir` says otherwise: the per-user data folder."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("gpu-train-monitor")) / "datasets"


def resident_bytes(total_images: int, train_images: int, pixels_per_image: int) -> int:
    """Device bytes of a resident dataset: every image (uint8) and label (int64), plus what each epoch
    keeps beside them on the device: the augmented copy of the training images, their random order and
    their labels in that order (int64 each). The fit check and the memory breakdown both use this."""
    return total_images * (pixels_per_image + 8) + train_images * (pixels_per_image + 16)


def dataset_shape(config: RunConfig, image_size: int = 32) -> tuple[int, int, int, int, int | None]:
    """(channels, height, width, classes, images) without loading the data: enough to size a run. Your own
    dataset is the exception: its factory says its shape only by returning it, so it is loaded. A text is one
    channel of seq_len x 1 tokens, its classes the vocabulary and its images the sequences (train and val)."""
    if is_text_dataset(config.dataset):
        train = train_size_hint(config)
        from .text import val_samples

        total = None if train is None else train + (val_samples(train) if config.dataset == SYNTHETIC_TEXT else 0)
        return 1, config.seq_len, 1, VOCAB, total
    if is_spec(config.dataset):
        from .custom import custom_shape

        return custom_shape(config.dataset, config.seed)
    if config.dataset == "synthetic":
        from .synthetic import CHANNELS, NUM_CLASSES, SIZE, val_samples

        return CHANNELS, SIZE, SIZE, NUM_CLASSES, config.synthetic_samples + val_samples(config.synthetic_samples)
    if config.dataset in _SHAPES:
        channels, height, width, classes, train, val = _SHAPES[config.dataset]
        return channels, height, width, classes, train + val
    from torchvision.datasets.folder import find_classes

    root = Path(config.data_dir) if config.data_dir else default_data_dir()
    try:
        classes, _ = find_classes(str(root / "train") if (root / "train").is_dir() else str(root))
    except (FileNotFoundError, OSError) as exc:
        from ...base.errors import DatasetError
        from ...base.text import Message

        raise DatasetError(
            Message("data_dir: cannot read image folder {root}: {error}", root=str(root), error=str(exc))
        ) from None
    return 3, image_size, image_size, len(classes), None


def load_dataset(config: RunConfig, generate_on: torch.device, image_size: int = 32) -> DatasetSplits | TextSplits:
    """Load `config.dataset`. Synthetic data is generated on `generate_on`; files are read to the host."""
    root = Path(config.data_dir) if config.data_dir else default_data_dir()
    if config.dataset == SYNTHETIC_TEXT:
        from .text import make_synthetic_text

        return make_synthetic_text(config.synthetic_samples, config.seq_len, config.seed, generate_on)
    path = text_file(config.dataset)
    if path is not None:
        from .text import load_text_file

        return load_text_file(path, config.seq_len)
    if is_spec(config.dataset):
        from .custom import load_custom

        return load_custom(config.dataset, config.seed)
    if config.dataset == "synthetic":
        return make_synthetic(config.synthetic_samples, config.seed, generate_on)
    if config.dataset in ("mnist", "fashion-mnist"):
        from .mnist import load_mnist

        return load_mnist(root, fashion=config.dataset == "fashion-mnist", download=config.download)
    if config.dataset == "cifar10":
        from .cifar import load_cifar10

        return load_cifar10(root, download=config.download)
    if config.dataset == "imagefolder":
        from .imagefolder import load_imagefolder

        return load_imagefolder(root, image_size=image_size, seed=config.seed)
    raise AssertionError(f"unhandled dataset {config.dataset}")  # RunConfig validated the choice


def train_size_hint(config: RunConfig) -> int | None:
    """Training images `config` will have, where that is known without reading any file (so a batch
    larger than the training set can be refused before a run): None for an image folder or your own. A text's
    are sequences; a text file's are counted from its size (None when it cannot be read)."""
    if config.dataset in ("synthetic", SYNTHETIC_TEXT):
        return config.synthetic_samples
    path = text_file(config.dataset)
    if path is not None:
        from .text import train_bytes

        try:
            size = path.stat().st_size
        except (OSError, ValueError):
            return None
        return max((train_bytes(size, config.seq_len) - 1) // config.seq_len, 0)
    return _SHAPES[config.dataset][4] if config.dataset in _SHAPES else None
