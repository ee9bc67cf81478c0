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

Each mistake is a ConfigError for `dataset` that names the spec, the split and the item's index.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch.utils.data import IterableDataset, Subset, TensorDataset

from core.datasets.readers import channel_stats, held_out
from core.datasets.types import DatasetSplits, ImageSplit
from core.errors import ConfigError
from core.units import format_bytes
from core.user_callables import a_type, call_factory, load_callable, one_line

Shape = tuple[int, int, int, int, int]  # channels, height, width, classes, images (as dataset_shape gives it)
_shapes: dict[tuple[Any, ...], Shape] = {}  # what dataset_shape asked for, per spec, seed and factory version


def load_custom(spec: str, seed: int) -> DatasetSplits:
    """The spec's dataset as uint8 splits in host memory; a ConfigError("dataset", ...) naming it otherwise."""
    factory = load_callable("dataset", spec)
    result = call_factory("dataset", spec, factory)
    train_set, val_set = _split_sets(spec, result)
    reader = _Reader(spec)
    train = reader.read(train_set, "train" if val_set is not None else None)
    val = reader.read(val_set, "val") if val_set is not None else None
    if val is not None and val[0].shape[1:] != train[0].shape[1:]:
        raise _error(spec, f"the val split's images are {_dims(val[0].shape[1:])} but the train split's are "
                           f"{_dims(train[0].shape[1:])}: both splits need one image size")
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
            keys = ", ".join(repr(k) for k in result) or "none"
            raise _error(spec, f"returned a dict without a 'train' entry (its keys: {keys}); give 'train' and 'val'")
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
    what = "returned" if part is None else f"returned a {part} split that is"
    if isinstance(value, IterableDataset):
        raise _error(spec, f"{what} an IterableDataset, which has no length: give a map-style Dataset "
                           "(with __len__ and __getitem__)")
    if not _map_style(value):
        expected = ("a map-style Dataset (with __len__ and __getitem__), a (train, val) tuple of them or a dict "
                    "with 'train' and 'val'") if part is None else "a map-style Dataset (with __len__ and __getitem__)"
        raise _error(spec, f"{what} {a_type(value)}; expected {expected}")
    return value


# ---- reading the items ---------------------------------------------------------------------------


class _Reader:
    """Reads every (image, label) of a split into one images tensor (uint8, or float32 until `_to_uint8`
    maps the floats of all splits alike) and one int64 labels tensor, checking each item."""

    def __init__(self, spec: str) -> None:
        self.spec = spec

    def read(self, dataset: Any, part: str | None) -> tuple[torch.Tensor, torch.Tensor]:
        where = "" if part is None else f" of the {part} split"
        try:
            count = len(dataset)
        except Exception as exc:
            raise _error(self.spec, f"len() of the dataset{where} raised {one_line(exc)}") from None
        if count == 0:
            raise _error(self.spec, f"the dataset{where} is empty")
        if isinstance(dataset, TensorDataset) and len(dataset.tensors) == 2:
            return self._from_tensors(dataset.tensors, where)
        first, first_label = self._item(dataset, 0, where)
        floats = first.is_floating_point()
        self._check_room(count, first, floats)
        images = torch.empty((count, *first.shape), dtype=torch.float32 if floats else torch.uint8)
        labels = torch.empty(count, dtype=torch.int64)
        for index in range(count):
            image, label = (first, first_label) if index == 0 else self._item(dataset, index, where)
            if image.shape != first.shape:
                raise _error(self.spec, f"item {index}{where} has an image of {_dims(image.shape)} but item 0's is "
                                        f"{_dims(first.shape)}: every image must have the same size")
            if image.is_floating_point() != floats:
                raise _error(self.spec, f"item {index}{where} has a {_dtype(image)} image but item 0's is "
                                        f"{_dtype(first)}: give every image the same kind of values")
            if not floats:
                self._check_bytes(image, f"item {index}{where}")
            images[index] = image
            labels[index] = label
        return images, labels

    def _item(self, dataset: Any, index: int, where: str) -> tuple[torch.Tensor, int]:
        try:
            item = dataset[index]
        except Exception as exc:
            raise _error(self.spec, f"reading item {index}{where} raised {one_line(exc)}") from None
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            shown = f"a {type(item).__name__} of {len(item)}" if isinstance(item, (tuple, list)) else a_type(item)
            raise _error(self.spec, f"item {index}{where} is {shown}; expected a pair (image tensor, int label)")
        return self._image(item[0], f"item {index}{where}"), self._label(item[1], f"item {index}{where}")

    def _image(self, image: Any, what: str) -> torch.Tensor:
        if type(image).__module__.startswith("PIL."):
            image = _pil_to_chw(image)
        elif isinstance(image, np.ndarray):
            image = torch.from_numpy(np.ascontiguousarray(image))
        if not isinstance(image, torch.Tensor):
            raise _error(self.spec, f"{what} has {a_type(image)} for its image; expected a tensor (channels x height x "
                                    "width)")
        image = image.detach().cpu()
        if image.dtype == torch.bool:
            image = image.to(torch.uint8) * 255
        if image.is_complex():
            raise _error(self.spec, f"{what} has a complex-valued image; expected real pixel values")
        if image.dim() == 2:
            image = image.unsqueeze(0)
        if image.dim() != 3 or image.numel() == 0:
            raise _error(self.spec, f"{what} has an image of {image.dim()} dimensions ({_dims(image.shape)}); "
                                    "expected channels x height x width (or height x width)")
        if image.shape[0] > 4 and image.shape[2] in (1, 3, 4):
            raise _error(self.spec, f"{what} has an image of {_dims(image.shape)}, which looks channels-last; "
                                    "give channels x height x width (e.g. image.permute(2, 0, 1))")
        return image

    def _label(self, label: Any, what: str) -> int:
        if isinstance(label, torch.Tensor) and label.numel() == 1:
            label = label.item()
        elif isinstance(label, (np.ndarray, np.generic)) and label.size == 1:
            label = label.item()
        if isinstance(label, bool) or not isinstance(label, int):
            raise _error(self.spec, f"{what} has the label {label!r} ({type(label).__name__}); expected an int "
                                    "class index")
        if label < 0:
            raise _error(self.spec, f"{what} has the label {label}; labels are class indices from 0")
        return label

    def _check_bytes(self, image: torch.Tensor, what: str) -> None:
        """An integer image goes into uint8 as it is: its values must already be 0..255."""
        if image.dtype != torch.uint8 and (int(image.min()) < 0 or int(image.max()) > 255):
            raise _error(self.spec, f"{what} has {_dtype(image)} pixel values from {int(image.min())} to "
                                    f"{int(image.max())}; integer images must hold 0..255 (or give floats)")

    def _check_room(self, count: int, first: torch.Tensor, floats: bool) -> None:
        """Refuse up front a dataset that cannot be held in host memory (before reading it for minutes)."""
        from core.memory import host_free_bytes

        needed = count * first.numel() * (4 if floats else 1)
        free = host_free_bytes()
        if needed > free:
            raise _error(self.spec, f"its {count:,} images of {_dims(first.shape)} need {format_bytes(needed)} of "
                                    f"host memory to load but {format_bytes(free)} is available")

    def _from_tensors(self, tensors: tuple[torch.Tensor, ...], where: str) -> tuple[torch.Tensor, torch.Tensor]:
        """A TensorDataset(images, labels) is taken whole: no item-by-item reading."""
        images, labels = (t.detach().cpu() for t in tensors)
        if images.dim() == 3:
            images = images.unsqueeze(1)
        if images.dim() != 4 or labels.dim() != 1 or images.shape[0] != labels.shape[0]:
            raise _error(self.spec, f"its TensorDataset{where} holds images of {_dims(images.shape)} and labels of "
                                    f"{_dims(labels.shape)}; expected N x channels x height x width (or N x height x "
                                    "width) images and N labels")
        self._image(images[0], f"item 0{where}")  # the checks an image read item by item gets
        if images.dtype == torch.bool:
            images = images.to(torch.uint8) * 255
        if labels.is_floating_point() or labels.is_complex() or labels.dtype == torch.bool:
            raise _error(self.spec, f"its TensorDataset{where} holds {_dtype(labels)} labels; expected int class "
                                    "indices")
        if int(labels.min()) < 0:
            index = int((labels < 0).nonzero()[0])
            raise _error(self.spec, f"item {index}{where} has the label {int(labels[index])}; labels are class "
                                    "indices from 0")
        if not images.is_floating_point():
            self._check_bytes(images, f"its TensorDataset{where}")
            images = images.to(torch.uint8)
        else:
            images = images.to(torch.float32)
        return images.contiguous(), labels.to(torch.int64)


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
            where = f" of the {split} split" if len(parts) > 1 else ""
            raise _error(spec, f"item {index}{where} has NaN or infinite pixel values")
    low = min(float(images.min()) for images in parts)
    high = max(float(images.max()) for images in parts)
    if 0.0 <= low and high <= 1.0:
        low, scale = 0.0, 255.0
    else:
        scale = 255.0 / (high - low) if high > low else 0.0
        warnings.warn(f"dataset {spec}: its float images run from {low:.4g} to {high:.4g}, not 0..1: they are "
                      "mapped linearly to 0..255 for the 8-bit copy every run trains from (the run normalises "
                      "them per channel)", UserWarning, stacklevel=2)
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
        raise _error(spec, "holds a single item; a run needs at least two (one is held out for validation)")
    val_indices = held_out(len(data), seed)
    is_val = torch.zeros(len(data), dtype=torch.bool)
    is_val[sorted(val_indices)] = True
    return (ImageSplit(data.images[~is_val], data.labels[~is_val]),
            ImageSplit(data.images[is_val], data.labels[is_val]))


def _num_classes(spec: str, train_set: Any, labels: dict[str | None, torch.Tensor]) -> int:
    """From the dataset's `classes` attribute (a list of names, or a count) when it has one, else the largest
    label + 1; a label beyond the declared classes is an error, and a classifier needs two classes.
    `labels`: per split name (None: the one dataset, before its validation part is held out)."""
    declared = _declared_classes(train_set)
    largest = max(int(split.max()) for split in labels.values())
    if declared is not None:
        if largest >= declared:
            part, found = next((part, split) for part, split in labels.items() if int(split.max()) == largest)
            index = int((found == largest).nonzero()[0])
            where = "" if part is None else f" of the {part} split"
            raise _error(spec, f"item {index}{where} has the label {largest}, but the dataset's `classes` "
                               f"attribute lists {declared} classes (labels 0..{declared - 1})")
        count = declared
    else:
        count = largest + 1
    if count < 2:
        raise _error(spec, "every label is 0; a classifier needs at least two classes")
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


# ---- words ---------------------------------------------------------------------------------------


def _pil_to_chw(image: Any) -> torch.Tensor:
    """A PIL image as a C x H x W tensor: 8-bit modes as they are, others as 8-bit RGB (as an image folder)."""
    from core.datasets.imagefolder import _to_rgb

    if image.mode not in ("L", "RGB", "RGBA"):
        image = _to_rgb(image)
    array = np.array(image, dtype=np.uint8)
    return torch.from_numpy(array).unsqueeze(0) if array.ndim == 2 else torch.from_numpy(array).permute(2, 0, 1)


def _error(spec: str, problem: str) -> ConfigError:
    return ConfigError("dataset", f"{spec}: {problem}")


def _dims(shape: torch.Size | tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) or "a scalar"


def _dtype(tensor: torch.Tensor) -> str:
    return str(tensor.dtype).removeprefix("torch.")

