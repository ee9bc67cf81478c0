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
message a `core.base.text.Message`, which the window translates).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch.utils.data import IterableDataset, Subset, TensorDataset

from core.base.errors import ConfigError
from core.base.text import Message, format_bytes
from core.config.user_callables import a_type, call_factory, load_callable, one_line
from core.data.datasets.readers import channel_stats, held_out
from core.data.datasets.types import DatasetSplits, ImageSplit

MAX_CLASSES = 100_000  # labels beyond this are a mistake (ImageNet-21k has 21,841), not a layer to allocate
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
        raise _error(
            spec,
            Message(
                "the val split's images are {val_dims} but the train split's are {train_dims}: "
                "both splits need one image size",
                val_dims=_dims(val[0].shape[1:]),
                train_dims=_dims(train[0].shape[1:]),
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
            raise _error(
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
            raise _error(
                spec,
                Message(
                    "returned an IterableDataset, which has no length: give a map-style Dataset "
                    "(with __len__ and __getitem__)"
                ),
            )
        raise _error(
            spec,
            Message(
                "returned a {part} split that is an IterableDataset, which has no length: give a "
                "map-style Dataset (with __len__ and __getitem__)",
                part=part,
            ),
        )
    if not _map_style(value):
        if part is None:
            raise _error(
                spec,
                Message(
                    "returned {found}; expected a map-style Dataset (with __len__ and "
                    "__getitem__), a (train, val) tuple of them or a dict with 'train' and 'val'",
                    found=a_type(value),
                ),
            )
        raise _error(
            spec,
            Message(
                "returned a {part} split that is {found}; expected a map-style Dataset (with __len__ and __getitem__)",
                part=part,
                found=a_type(value),
            ),
        )
    return value


# ---- reading the items ---------------------------------------------------------------------------


class _Reader:
    """Reads every (image, label) of a split into one images tensor (uint8, or float32 until `_to_uint8`
    maps the floats of all splits alike) and one int64 labels tensor, checking each item."""

    def __init__(self, spec: str) -> None:
        self.spec = spec

    def read(self, dataset: Any, part: str | None) -> tuple[torch.Tensor, torch.Tensor]:
        where = _of_split(part)
        try:
            count = len(dataset)
        except Exception as exc:
            raise _error(
                self.spec, Message("len() of the dataset{where} raised {error}", where=where, error=one_line(exc))
            ) from None
        if count == 0:
            raise _error(self.spec, Message("the dataset{where} is empty", where=where))
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
                raise _error(
                    self.spec,
                    Message(
                        "{item} has an image of {dims} but item 0's is {first_dims}: every "
                        "image must have the same size",
                        item=_item_name(index, where),
                        dims=_dims(image.shape),
                        first_dims=_dims(first.shape),
                    ),
                )
            if image.is_floating_point() != floats:
                raise _error(
                    self.spec,
                    Message(
                        "{item} has a {dtype} image but item 0's is {first_dtype}: give every "
                        "image the same kind of values",
                        item=_item_name(index, where),
                        dtype=_dtype(image),
                        first_dtype=_dtype(first),
                    ),
                )
            if not floats:
                self._check_bytes(image, _item_name(index, where))
            images[index] = image
            labels[index] = label
        return images, labels

    def _item(self, dataset: Any, index: int, where: str) -> tuple[torch.Tensor, int]:
        try:
            item = dataset[index]
        except Exception as exc:
            raise _error(
                self.spec, Message("reading {item} raised {error}", item=_item_name(index, where), error=one_line(exc))
            ) from None
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            shown = (
                Message("a {type} of {count}", type=type(item).__name__, count=len(item))
                if isinstance(item, (tuple, list))
                else a_type(item)
            )
            raise _error(
                self.spec,
                Message(
                    "{item} is {found}; expected a pair (image tensor, int label)",
                    item=_item_name(index, where),
                    found=shown,
                ),
            )
        return self._image(item[0], _item_name(index, where)), self._label(item[1], _item_name(index, where))

    def _image(self, image: Any, what: Message) -> torch.Tensor:
        if type(image).__module__.startswith("PIL."):
            image = _pil_to_chw(image)
        elif isinstance(image, np.ndarray):
            image = torch.from_numpy(np.ascontiguousarray(image))
        if not isinstance(image, torch.Tensor):
            raise _error(
                self.spec,
                Message(
                    "{what} has {found} for its image; expected a tensor (channels x height x width)",
                    what=what,
                    found=a_type(image),
                ),
            )
        image = image.detach().cpu()
        if image.dtype == torch.bool:
            image = image.to(torch.uint8) * 255
        if image.is_complex():
            raise _error(self.spec, Message("{what} has a complex-valued image; expected real pixel values", what=what))
        if image.dim() == 2:
            image = image.unsqueeze(0)
        if image.dim() != 3 or image.numel() == 0:
            raise _error(
                self.spec,
                Message(
                    "{what} has an image of {count} dimensions ({dims}); expected channels x "
                    "height x width (or height x width)",
                    what=what,
                    count=image.dim(),
                    dims=_dims(image.shape),
                ),
            )
        if image.shape[0] > 4 and image.shape[2] in (1, 3, 4):
            raise _error(
                self.spec,
                Message(
                    "{what} has an image of {dims}, which looks channels-last; give channels x "
                    "height x width (e.g. image.permute(2, 0, 1))",
                    what=what,
                    dims=_dims(image.shape),
                ),
            )
        return image

    def _label(self, label: Any, what: Message) -> int:
        if isinstance(label, torch.Tensor) and label.numel() == 1:
            label = label.item()
        elif isinstance(label, (np.ndarray, np.generic)) and label.size == 1:
            label = label.item()
        if isinstance(label, bool) or not isinstance(label, int):
            raise _error(
                self.spec,
                Message(
                    "{what} has the label {label} ({type}); expected an int class index",
                    what=what,
                    label=repr(label),
                    type=type(label).__name__,
                ),
            )
        if label < 0:
            raise _error(self.spec, _negative_label(what, label))
        return label

    def _check_bytes(self, image: torch.Tensor, what: Message) -> None:
        """An integer image goes into uint8 as it is: its values must already be 0..255."""
        if image.dtype != torch.uint8 and (int(image.min()) < 0 or int(image.max()) > 255):
            raise _error(
                self.spec,
                Message(
                    "{what} has {dtype} pixel values from {low} to {high}; integer images "
                    "must hold 0..255 (or give floats)",
                    what=what,
                    dtype=_dtype(image),
                    low=int(image.min()),
                    high=int(image.max()),
                ),
            )

    def _check_room(self, count: int, first: torch.Tensor, floats: bool) -> None:
        """Refuse up front a dataset that cannot be held in host memory (before reading it for minutes)."""
        from core.device.host_memory import host_free_bytes

        needed = count * first.numel() * (4 if floats else 1)
        free = host_free_bytes()
        if needed > free:
            raise _error(
                self.spec,
                Message(
                    "its {count:,} images of {dims} need {needed} of host memory to load but {free} is available",
                    count=count,
                    dims=_dims(first.shape),
                    needed=format_bytes(needed),
                    free=format_bytes(free),
                ),
            )

    def _from_tensors(self, tensors: tuple[torch.Tensor, ...], where: str) -> tuple[torch.Tensor, torch.Tensor]:
        """A TensorDataset(images, labels) is taken whole: no item-by-item reading."""
        images, labels = (t.detach().cpu() for t in tensors)
        if images.dim() == 3:
            images = images.unsqueeze(1)
        if images.dim() != 4 or labels.dim() != 1 or images.shape[0] != labels.shape[0]:
            raise _error(
                self.spec,
                Message(
                    "its TensorDataset{where} holds images of {image_dims} and labels of "
                    "{label_dims}; expected N x channels x height x width (or N x height x "
                    "width) images and N labels",
                    where=where,
                    image_dims=_dims(images.shape),
                    label_dims=_dims(labels.shape),
                ),
            )
        self._image(images[0], _item_name(0, where))  # the checks an image read item by item gets
        if images.dtype == torch.bool:
            images = images.to(torch.uint8) * 255
        if labels.is_floating_point() or labels.is_complex() or labels.dtype == torch.bool:
            raise _error(
                self.spec,
                Message(
                    "its TensorDataset{where} holds {dtype} labels; expected int class indices",
                    where=where,
                    dtype=_dtype(labels),
                ),
            )
        if int(labels.min()) < 0:
            index = int((labels < 0).nonzero()[0])
            raise _error(self.spec, _negative_label(_item_name(index, where), int(labels[index])))
        if not images.is_floating_point():
            self._check_bytes(images, Message("its TensorDataset{where}", where=where))
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
            where = _of_split(split if len(parts) > 1 else None)
            raise _error(spec, Message("{what} has NaN or infinite pixel values", what=_item_name(index, where)))
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
        raise _error(spec, Message("holds a single item; a run needs at least two (one is held out for validation)"))
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
        raise _error(
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
        what = _item_name(int((found == largest).nonzero()[0]), _of_split(part))
        if declared is None:
            raise _error(
                spec,
                Message(
                    "{what} has the label {label}; labels are class indices 0..{last} (at most {limit} classes)",
                    what=what,
                    label=largest,
                    last=MAX_CLASSES - 1,
                    limit=MAX_CLASSES,
                ),
            )
        raise _error(
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
        raise _error(spec, Message("every label is 0; a classifier needs at least two classes"))
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
    from core.data.datasets.imagefolder import _to_rgb

    if image.mode not in ("L", "RGB", "RGBA"):
        image = _to_rgb(image)
    array = np.array(image, dtype=np.uint8)
    return torch.from_numpy(array).unsqueeze(0) if array.ndim == 2 else torch.from_numpy(array).permute(2, 0, 1)


def _error(spec: str, problem: Message) -> ConfigError:
    return ConfigError("dataset", Message("{spec}: {problem}", spec=spec, problem=problem))


def _of_split(part: str | None) -> str:
    """' of the train split' after 'item 3', 'the dataset'...; empty for a dataset without splits."""
    return "" if part is None else Message(" of the {part} split", part=part)


def _item_name(index: int, where: str) -> Message:
    """'item 3' or 'item 3 of the val split': what an item message names."""
    return Message("item {index}{where}", index=index, where=where)


def _negative_label(what: Message, label: int) -> Message:
    return Message("{what} has the label {label}; labels are class indices from 0", what=what, label=label)


def _dims(shape: torch.Size | tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) or Message("a scalar")


def _dtype(tensor: torch.Tensor) -> str:
    return str(tensor.dtype).removeprefix("torch.")
