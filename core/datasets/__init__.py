"""Dataset loading: one entry point that reads the config and returns uint8 splits.

`synthetic` is generated directly where it will live (on the device for the resident placement);
the file formats are read into host memory, from which either placement takes them.
"""

from __future__ import annotations

from pathlib import Path

import torch

from core.config import RunConfig
from core.datasets.synthetic import make_synthetic, synthetic_bytes
from core.datasets.types import DatasetSplits, ImageSplit

__all__ = ["DatasetSplits", "ImageSplit", "default_data_dir", "load_dataset", "synthetic_bytes"]


def default_data_dir() -> Path:
    """Where datasets live unless `--data-dir` says otherwise: the per-user data folder."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("gpu-train-monitor")) / "datasets"


def load_dataset(config: RunConfig, generate_on: torch.device, image_size: int = 32) -> DatasetSplits:
    """Load `config.dataset`. Synthetic data is generated on `generate_on`; files are read to the host."""
    root = Path(config.data_dir) if config.data_dir else default_data_dir()
    if config.dataset == "synthetic":
        return make_synthetic(config.synthetic_samples, config.seed, generate_on)
    if config.dataset in ("mnist", "fashion-mnist"):
        from core.datasets.mnist import load_mnist

        return load_mnist(root, fashion=config.dataset == "fashion-mnist", download=config.download)
    if config.dataset == "cifar10":
        from core.datasets.cifar import load_cifar10

        return load_cifar10(root, download=config.download)
    if config.dataset == "imagefolder":
        from core.datasets.imagefolder import load_imagefolder

        return load_imagefolder(root, image_size=image_size, seed=config.seed)
    raise AssertionError(f"unhandled dataset {config.dataset}")  # RunConfig validated the choice
