"""Reading a custom dataset's items (gpu_train_monitor.data.datasets.custom): each (image, label) checked and gathered
into one images tensor and one labels tensor, and the words every custom-dataset error is built from.

Its own module because checking items one by one (shapes, dtypes, value ranges, host memory) is a job apart
from making sense of what the factory returned and turning the splits into what a run takes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch.utils.data import TensorDataset

from ...base.errors import ConfigError
from ...base.text import Message, format_bytes
from ...base.user_code import a_type, one_line


class ItemReader:
    """Reads every (image, label) of a split into one images tensor (uint8, or float32 until
    `custom._to_uint8` maps the floats of all splits alike) and one int64 labels tensor, checking each item."""

    def __init__(self, spec: str) -> None:
        self.spec = spec

    def read(self, dataset: Any, part: str | None) -> tuple[torch.Tensor, torch.Tensor]:
        where = of_split(part)
        try:
            count = len(dataset)
        except Exception as exc:
            raise dataset_error(
                self.spec, Message("len() of the dataset{where} raised {error}", where=where, error=one_line(exc))
            ) from None
        if count == 0:
            raise dataset_error(self.spec, Message("the dataset{where} is empty", where=where))
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
                raise dataset_error(
                    self.spec,
                    Message(
                        "{item} has an image of {dims} but item 0's is {first_dims}: every "
                        "image must have the same size",
                        item=item_name(index, where),
                        dims=dims_text(image.shape),
                        first_dims=dims_text(first.shape),
                    ),
                )
            if image.is_floating_point() != floats:
                raise dataset_error(
                    self.spec,
                    Message(
                        "{item} has a {dtype} image but item 0's is {first_dtype}: give every "
                        "image the same kind of values",
                        item=item_name(index, where),
                        dtype=_dtype(image),
                        first_dtype=_dtype(first),
                    ),
                )
            if not floats:
                self._check_bytes(image, item_name(index, where))
            images[index] = image
            labels[index] = label
        return images, labels

    def _item(self, dataset: Any, index: int, where: str) -> tuple[torch.Tensor, int]:
        try:
            item = dataset[index]
        except Exception as exc:
            raise dataset_error(
                self.spec, Message("reading {item} raised {error}", item=item_name(index, where), error=one_line(exc))
            ) from None
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            shown = (
                Message("a {type} of {count}", type=type(item).__name__, count=len(item))
                if isinstance(item, (tuple, list))
                else a_type(item)
            )
            raise dataset_error(
                self.spec,
                Message(
                    "{item} is {found}; expected a pair (image tensor, int label)",
                    item=item_name(index, where),
                    found=shown,
                ),
            )
        return self._image(item[0], item_name(index, where)), self._label(item[1], item_name(index, where))

    def _image(self, image: Any, what: Message) -> torch.Tensor:
        if type(image).__module__.startswith("PIL."):
            image = _pil_to_chw(image)
        elif isinstance(image, np.ndarray):
            image = torch.from_numpy(np.ascontiguousarray(image))
        if not isinstance(image, torch.Tensor):
            raise dataset_error(
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
            raise dataset_error(
                self.spec, Message("{what} has a complex-valued image; expected real pixel values", what=what)
            )
        if image.dim() == 2:
            image = image.unsqueeze(0)
        if image.dim() != 3 or image.numel() == 0:
            raise dataset_error(
                self.spec,
                Message(
                    "{what} has an image of {count} dimensions ({dims}); expected channels x "
                    "height x width (or height x width)",
                    what=what,
                    count=image.dim(),
                    dims=dims_text(image.shape),
                ),
            )
        if image.shape[0] > 4 and image.shape[2] in (1, 3, 4):
            raise dataset_error(
                self.spec,
                Message(
                    "{what} has an image of {dims}, which looks channels-last; give channels x "
                    "height x width (e.g. image.permute(2, 0, 1))",
                    what=what,
                    dims=dims_text(image.shape),
                ),
            )
        return image

    def _label(self, label: Any, what: Message) -> int:
        if isinstance(label, torch.Tensor) and label.numel() == 1:
            label = label.item()
        elif isinstance(label, (np.ndarray, np.generic)) and label.size == 1:
            label = label.item()
        if isinstance(label, bool) or not isinstance(label, int):
            raise dataset_error(
                self.spec,
                Message(
                    "{what} has the label {label} ({type}); expected an int class index",
                    what=what,
                    label=repr(label),
                    type=type(label).__name__,
                ),
            )
        if label < 0:
            raise dataset_error(self.spec, _negative_label(what, label))
        return label

    def _check_bytes(self, image: torch.Tensor, what: Message) -> None:
        """An integer image goes into uint8 as it is: its values must already be 0..255."""
        if image.dtype != torch.uint8 and (int(image.min()) < 0 or int(image.max()) > 255):
            raise dataset_error(
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
        from ...device.host_memory import host_free_bytes

        needed = count * first.numel() * (4 if floats else 1)
        free = host_free_bytes()
        if needed > free:
            raise dataset_error(
                self.spec,
                Message(
                    "its {count:,} images of {dims} need {needed} of host memory to load but {free} is available",
                    count=count,
                    dims=dims_text(first.shape),
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
            raise dataset_error(
                self.spec,
                Message(
                    "its TensorDataset{where} holds images of {image_dims} and labels of "
                    "{label_dims}; expected N x channels x height x width (or N x height x "
                    "width) images and N labels",
                    where=where,
                    image_dims=dims_text(images.shape),
                    label_dims=dims_text(labels.shape),
                ),
            )
        self._image(images[0], item_name(0, where))  # the checks an image read item by item gets
        if images.dtype == torch.bool:
            images = images.to(torch.uint8) * 255
        if labels.is_floating_point() or labels.is_complex() or labels.dtype == torch.bool:
            raise dataset_error(
                self.spec,
                Message(
                    "its TensorDataset{where} holds {dtype} labels; expected int class indices",
                    where=where,
                    dtype=_dtype(labels),
                ),
            )
        if int(labels.min()) < 0:
            index = int((labels < 0).nonzero()[0])
            raise dataset_error(self.spec, _negative_label(item_name(index, where), int(labels[index])))
        if not images.is_floating_point():
            self._check_bytes(images, Message("its TensorDataset{where}", where=where))
            images = images.to(torch.uint8)
        else:
            images = images.to(torch.float32)
        return images.contiguous(), labels.to(torch.int64)


# ---- words ---------------------------------------------------------------------------------------


def _pil_to_chw(image: Any) -> torch.Tensor:
    """A PIL image as a C x H x W tensor: 8-bit modes as they are, others as 8-bit RGB (as an image folder)."""
    from .image_decode import to_rgb

    if image.mode not in ("L", "RGB", "RGBA"):
        image = to_rgb(image)
    array = np.array(image, dtype=np.uint8)
    return torch.from_numpy(array).unsqueeze(0) if array.ndim == 2 else torch.from_numpy(array).permute(2, 0, 1)


def dataset_error(spec: str, problem: Message) -> ConfigError:
    return ConfigError("dataset", Message("{spec}: {problem}", spec=spec, problem=problem))


def of_split(part: str | None) -> str:
    """' of the train split' after 'item 3', 'the dataset'...; empty for a dataset without splits."""
    return "" if part is None else Message(" of the {part} split", part=part)


def item_name(index: int, where: str) -> Message:
    """'item 3' or 'item 3 of the val split': what an item message names."""
    return Message("item {index}{where}", index=index, where=where)


def _negative_label(what: Message, label: int) -> Message:
    return Message("{what} has the label {label}; labels are class indices from 0", what=what, label=label)


def dims_text(shape: torch.Size | tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) or Message("a scalar")


def _dtype(tensor: torch.Tensor) -> str:
    return str(tensor.dtype).removeprefix("torch.")
