"""Your own model and dataset as a user writes them: modules a test writes into its own folder, which it
makes the current one (as a user runs the CLI from their project), so `module:factory` imports from there.

`importable_folder` puts sys.path and the current folder back after the test and forgets the modules
imported from its folder, so each test imports its own modules even where two tests name them alike.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

MODELS = '''
import torch
from torch import nn


def small_net(num_classes, in_channels=3):
    """A real (tiny) classifier that takes what the run offers."""
    return nn.Sequential(nn.Conv2d(in_channels, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(4, num_classes))


class TenWay(nn.Module):
    """Takes no arguments: always 10 outputs, for 3-channel images of any size."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.head = nn.Linear(4, 10)

    def forward(self, x):
        return self.head(self.conv(x).mean(dim=(2, 3)))


def for_28px(num_classes):
    """Made for 1x28x28 images (a flattening head): fails on anything else."""
    return nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, num_classes))


def needs_width(width, num_classes=10):
    return nn.Linear(width, num_classes)


def not_a_model():
    return [nn.Linear(2, 2)]


def no_parameters():
    return nn.Flatten()


def returns_a_tuple(num_classes):
    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = small_net(num_classes)

        def forward(self, x):
            return self.inner(x), x
    return Pair()


def raises():
    raise RuntimeError("the weights file is missing")


INSTANCE = small_net(10)
NUMBER = 3
'''

DATASETS = '''
import numpy as np
import torch
from torch.utils.data import Dataset, IterableDataset, TensorDataset


class Blobs(Dataset):
    """`count` images of `side` px whose brightness says the class: learnable in a few steps."""

    def __init__(self, count=96, side=8, channels=3, num_classes=3, kind="float", seed=0, classes=True):
        generator = torch.Generator().manual_seed(seed)
        self.labels = torch.arange(count) % num_classes
        base = (self.labels.float() + 0.5) / num_classes
        images = base.view(-1, 1, 1, 1) + 0.05 * torch.randn(count, channels, side, side, generator=generator)
        images = images.clamp(0, 1)
        self.images = (images * 255).round().to(torch.uint8) if kind == "uint8" else images
        if classes:
            self.classes = [f"class {i}" for i in range(num_classes)]

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        return self.images[index], int(self.labels[index])


def blobs():
    return Blobs()


def blobs_uint8():
    return Blobs(kind="uint8")


def blobs_splits():
    return Blobs(count=90, seed=1), Blobs(count=30, seed=2)


def blobs_dict():
    return {"train": Blobs(count=90), "test": Blobs(count=30, seed=3)}


def blobs_train_only():
    return {"train": Blobs(count=50)}


def tensors():
    labels = torch.arange(64) % 4
    return TensorDataset(torch.rand(64, 1, 12, 12), labels)


def normalised():
    """Floats outside 0..1, as after a Normalize transform."""
    data = Blobs(count=40)
    data.images = (data.images - 0.5) / 0.25
    return data


def grey_numpy():
    return [(np.full((6, 6), 10 * i, dtype=np.uint8), i % 2) for i in range(20)]


def pil_images():
    """As a torchvision dataset gives them without a transform: PIL images, here 5 wide and 4 high."""
    from PIL import Image

    return [(Image.new("RGB", (5, 4), (20 * i, 0, 255)), np.int64(i % 2)) for i in range(10)]


class Ragged(Blobs):
    def __getitem__(self, index):
        image, label = super().__getitem__(index)
        return (image[:, :6, :6] if index == 5 else image), label


def ragged():
    return Ragged(count=20)


class Triples(Blobs):
    def __getitem__(self, index):
        image, label = super().__getitem__(index)
        return image, label, "extra"


def triples():
    return Triples(count=10)


class FloatLabels(Blobs):
    def __getitem__(self, index):
        image, label = super().__getitem__(index)
        return image, float(label) if index == 3 else label


def float_labels():
    return FloatLabels(count=10)


class BadIndex(Blobs):
    def __getitem__(self, index):
        if index == 7:
            raise KeyError("no such row")
        return super().__getitem__(index)


def bad_index():
    return BadIndex(count=10)


def channels_last():
    return [(torch.rand(16, 16, 3), i % 2) for i in range(8)]


def beyond_classes():
    data = Blobs(count=12)
    data.labels = data.labels.clone()
    data.labels[9] = 7
    return data


def one_class():
    return Blobs(count=12, num_classes=1)


def stream():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter([])
    return Stream()


def a_string():
    return "not a dataset"


def empty():
    return []


def no_train():
    return {"training": Blobs()}
'''


def write_module(folder: Path, name: str, source: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def importable_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """tmp_path holding `mymodels.py` and `mydata.py`, as the current folder, for one test."""
    write_module(tmp_path, "mymodels", MODELS)
    write_module(tmp_path, "mydata", DATASETS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    for name, module in list(sys.modules.items()):  # only the test's own: a library imported twice breaks
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]
