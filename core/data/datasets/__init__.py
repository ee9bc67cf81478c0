"""Dataset loading: one entry point that reads the config and returns uint8 splits.

`synthetic` is generated directly where it will live (on the device for the resident placement);
the file formats, and your own dataset (`package.module:factory`, `gpu_train_monitor.data.datasets.custom`), are read
into host memory, from which either placement takes them.
"""

from __future__ import annotations

from pathlib import Path

import torch

from ...base.user_code import is_spec
from ...config.run_config import RunConfig
from .synthetic import make_synthetic, synthetic_bytes
from .types import DatasetSplits, ImageSplit

__all__ = [
    "DatasetSplits",
    "ImageSplit",
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
    dataset is the exception: its factory says its shape only by returning it, so it is loaded."""
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


def load_dataset(config: RunConfig, generate_on: torch.device, image_size: int = 32) -> DatasetSplits:
    """Load `config.dataset`. Synthetic data is generated on `generate_on`; files are read to the host."""
    root = Path(config.data_dir) if config.data_dir else default_data_dir()
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
    larger than the training set can be refused before a run): None for an image folder or your own."""
    if config.dataset == "synthetic":
        return config.synthetic_samples
    return _SHAPES[config.dataset][4] if config.dataset in _SHAPES else None
