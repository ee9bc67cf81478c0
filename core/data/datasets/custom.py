"""Your own dataset: a `package.module:factory` spec whose callable returns a map-style `Dataset`.

The factory is called with no arguments and returns one of:
- a map-style dataset (`__len__` and `__getitem__`) of (image, label) items: a seeded tenth is held out
  for validation, as for an image folder without a val folder;
- a (train, val) tuple of them, or a dict with "train" and "val" (or "test"; "train" alone is split).

Images are tensors C x H x W (H x W for one channel; numpy arrays and PIL images are taken too), every
one the same size; labels are int class indices. The classes are counted from the dataset's `classes`
attribute when it has one, else as the largest label + 1. Like every other reader this one returns
whole uint8 splits, which both placements start from (resident when they fit on the device): integer
images must hold 0..255; float images in 0..1 are scaled by 255, others are mapped linearly from the
data's own minimum..maximum to 0..255 (said in the run's log). Normalisation then uses the training
split's per-channel mean and std, and the training images get the random crop and flip every
built-in dataset but MNIST gets.

Each mistake is a ConfigError for `dataset` that names the spec, the split and the item's index (its
message a `gpu_train_monitor.base.text.Message`, which the window translates).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch.utils.data import IterableDataset, Subset

from ...base.text import Message
from ...base.user_code import a_type, call_factory, load_callable
from .custom_items import ItemReader, dataset_error, dims_text, item_name, of_split
from .readers import channel_stats, held_out
from .types import DatasetSplits, ImageSplit

MAX_CLASSES = 100_000  # labels beyond this are a mistake (ImageNet-21k has 21,841), not a layer to allocate
Shape = tuple[int, int, int, int, int]  # channels, height, width, classes, images (as dataset_shape gives it)
_shapes: dict[tuple[Any, ...], Shape] = {}  # what dataset_shape asked for, per spec, seed and factory version


def load_custom(spec: str, seed: int) -> DatasetSplits:
    """The spec's dataset as uint8 splits in host memory; a ConfigError("dataset", ...) naming it otherwise."""
    factory = load_callable("dataset", spec)
    result = call_factory("dataset", spec, factory)
    train_set, val_set = _split_sets(spec, result)
    reader = ItemReader(spec)
    train = reader.read(train_set, "train" if val_set is not None else None)
    val = reader.read(val_set, "val") if val_set is not None else None
    if val is not None and val[0].shape[1:] != train[0].shape[1:]:
        raise dataset_error(
            spec,
            Message(
                "the val split's images are {val_dims} but the train split's are {train_dims}: "
                "both splits need one image size",
                val_dims=dims_text(val[0].shape[1:]),
                train_dims=dims_text(train[0].shape[1:]),
            ),
        )
    labels = {"train": train[1], "val": val[1]} if val is not None else {None: train[1]}
    num_classes = _num_classes(spec, train_set, labels)
    images = _to_uint8(spec, [train[0]] + ([val[0]] if val is not None else []))
    train_split = ImageSplit(images[0], train[1])
    if val is not None:
        val_split = ImageSplit(images[1], val[1])
    else:
        train_split, val_split = _hold_out(spec, train_split, seed)
    mean, std = channel_stats(train_split.images)
    return DatasetSplits(name=spec, train=train_split, val=val_split, num_classes=num_classes, mean=mean, std=std)


def custom_shape(spec: str, seed: int) -> Shape:
    """(channels, height, width, classes, images) of the spec's dataset, for sizing a run (the batch-size
    finder asks once per trial). Known only by loading it, so remembered per version of the factory."""
    factory = load_callable("dataset", spec)  # cheap once imported; a changed module is imported again
    key = (spec, seed, os.getcwd(), id(factory))
    if key not in _shapes:
        splits = load_custom(spec, seed)
        channels, (height, width) = splits.channels, splits.image_size
        if len(_shapes) >= 8:
            _shapes.clear()
        _shapes[key] = (channels, height, width, splits.num_classes, len(splits.train) + len(splits.val))
    return _shapes[key]


# ---- what the factory returned -------------------------------------------------------------------


def _split_sets(spec: str, result: Any) -> tuple[Any, Any | None]:
    """(train, val or None) from a dataset, a (train, val) tuple or a dict of splits."""
    if isinstance(result, Mapping):
        if "train" not in result:
            keys = ", ".join(repr(k) for k in result) or Message("none")
            raise dataset_error(
                spec,
                Message(
                    "returned a dict without a 'train' entry (its keys: {keys}); give 'train' and 'val'", keys=keys
                ),
            )
        val = result.get("val", result.get("test"))
        return _checked_set(spec, result["train"], "train"), (None if val is None else _checked_set(spec, val, "val"))
    if isinstance(result, tuple) and len(result) == 2 and all(_is_split(part) for part in result):
        return _checked_set(spec, result[0], "train"), _checked_set(spec, result[1], "val")
    return _checked_set(spec, result, None), None


def _is_split(value: Any) -> bool:
    """A dataset, not an (image, label) item's part: a tuple or a tensor has a length and items too."""
    return _map_style(value) and not isinstance(value, (tuple, torch.Tensor, np.ndarray))


def _map_style(value: Any) -> bool:
    return hasattr(value, "__len__") and hasattr(value, "__getitem__") and not isinstance(value, (str, bytes))


def _checked_set(spec: str, value: Any, part: str | None) -> Any:
    if isinstance(value, IterableDataset):
        if part is None:
            raise dataset_error(
                spec,
                Message(
                    "returned an IterableDataset, which has no length: give a map-style Dataset "
                    "(with __len__ and __getitem__)"
                ),
            )
        raise dataset_error(
            spec,
            Message(
                "returned a {part} split that is an IterableDataset, which has no length: give a "
                "map-style Dataset (with __len__ and __getitem__)",
                part=part,
            ),
        )
    if not _map_style(value):
        if part is None:
            raise dataset_error(
                spec,
                Message(
                    "returned {found}; expected a map-style Dataset (with __len__ and "
                    "__getitem__), a (train, val) tuple of them or a dict with 'train' and 'val'",
                    found=a_type(value),
                ),
            )
        raise dataset_error(
            spec,
            Message(
                "returned a {part} split that is {found}; expected a map-style Dataset (with __len__ and __getitem__)",
                part=part,
                found=a_type(value),
            ),
        )
    return value


# ---- the splits as the run takes them -------------------------------------------------------------


def _to_uint8(spec: str, parts: list[torch.Tensor]) -> list[torch.Tensor]:
    """uint8 images: integer ones are already; float ones (all splits alike) are scaled by 255 when they lie
    in 0..1, else mapped from the data's own minimum..maximum to 0..255 (the run's log says so)."""
    if not parts[0].is_floating_point():
        return parts
    for split, images in zip(("train", "val"), parts):
        bad = ~torch.isfinite(images).flatten(1).all(dim=1)
        if bool(bad.any()):
            index = int(bad.nonzero()[0])
            where = of_split(split if len(parts) > 1 else None)
            raise dataset_error(spec, Message("{what} has NaN or infinite pixel values", what=item_name(index, where)))
    low = min(float(images.min()) for images in parts)
    high = max(float(images.max()) for images in parts)
    if 0.0 <= low and high <= 1.0:
        low, scale = 0.0, 255.0
    else:
        scale = 255.0 / (high - low) if high > low else 0.0
        warnings.warn(
            Message(
                "dataset {spec}: its float images run from {low:.4g} to {high:.4g}, not 0..1: they are "
                "mapped linearly to 0..255 for the 8-bit copy every run trains from (the run "
                "normalises them per channel)",
                spec=spec,
                low=low,
                high=high,
            ),
            UserWarning,
            stacklevel=2,
        )
    converted = []
    for images in parts:
        out = torch.empty(images.shape, dtype=torch.uint8)
        for source, target in zip(images.split(1024), out.split(1024)):
            target.copy_(((source - low) * scale).round_().clamp_(0.0, 255.0))
        converted.append(out)
    return converted


def _hold_out(spec: str, data: ImageSplit, seed: int) -> tuple[ImageSplit, ImageSplit]:
    """A seeded tenth of the items for validation (at least one), both parts in the dataset's order."""
    if len(data) < 2:
        raise dataset_error(
            spec, Message("holds a single item; a run needs at least two (one is held out for validation)")
        )
    val_indices = held_out(len(data), seed)
    is_val = torch.zeros(len(data), dtype=torch.bool)
    is_val[sorted(val_indices)] = True
    return (
        ImageSplit(data.images[~is_val], data.labels[~is_val]),
        ImageSplit(data.images[is_val], data.labels[is_val]),
    )


def _num_classes(spec: str, train_set: Any, labels: dict[str | None, torch.Tensor]) -> int:
    """From the dataset's `classes` attribute (a list of names, or a count) when it has one, else the largest
    label + 1; a label beyond the declared classes is an error, and a classifier needs two classes.
    `labels`: per split name (None: the one dataset, before its validation part is held out)."""
    declared = _declared_classes(train_set)
    if declared is not None and declared > MAX_CLASSES:  # the model's last layer would be that wide
        raise dataset_error(
            spec,
            Message(
                "its `classes` attribute lists {declared} classes; at most {limit} are supported",
                declared=declared,
                limit=MAX_CLASSES,
            ),
        )
    largest = max(int(split.max()) for split in labels.values())
    if largest >= (MAX_CLASSES if declared is None else declared):  # refused before a layer is allocated for it
        part, found = next((part, split) for part, split in labels.items() if int(split.max()) == largest)
        what = item_name(int((found == largest).nonzero()[0]), of_split(part))
        if declared is None:
            raise dataset_error(
                spec,
                Message(
                    "{what} has the label {label}; labels are class indices 0..{last} (at most {limit} classes)",
                    what=what,
                    label=largest,
                    last=MAX_CLASSES - 1,
                    limit=MAX_CLASSES,
                ),
            )
        raise dataset_error(
            spec,
            Message(
                "{what} has the label {label}, but the dataset's `classes` attribute lists "
                "{declared} classes (labels 0..{last})",
                what=what,
                label=largest,
                declared=declared,
                last=declared - 1,
            ),
        )
    count = largest + 1 if declared is None else declared
    if count < 2:
        raise dataset_error(spec, Message("every label is 0; a classifier needs at least two classes"))
    return count


def _declared_classes(dataset: Any) -> int | None:
    classes = getattr(dataset, "classes", None)
    if classes is None and isinstance(dataset, Subset):
        return _declared_classes(dataset.dataset)
    if isinstance(classes, int) and not isinstance(classes, bool):
        return classes
    try:
        return len(classes) if classes is not None and not isinstance(classes, (str, bytes)) else None
    except TypeError:
        return None
