"""Where a run's data lives: loading the dataset and deciding between the two placements.

`resident` keeps the whole dataset on the device; it is chosen (placement `auto`) or allowed (placement
`resident`) only when `resident_bytes` fits in a share of the memory this process may still use.
Otherwise the data streams from host memory. The synthetic dataset's size is known before it exists,
so it is generated directly where it will live.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import torch

from ..base.errors import DatasetError
from ..base.text import Message, format_bytes, message_of
from ..config.run_config import RunConfig
from ..config.sequences import SYNTHETIC_TEXT
from .datasets import DatasetSplits, TextSplits, load_dataset, resident_bytes
from .datasets.synthetic import CHANNELS, SIZE, val_samples
from .datasets.text import synthetic_text_bytes

RESIDENT_FIT_FRACTION = 0.8  # the resident dataset may take at most this share of free memory


@dataclass(frozen=True)
class Placement:
    """The placement in force and why: `needed_bytes` is what the resident dataset would hold on the device."""

    name: str  # "resident" or "stream"
    needed_bytes: int
    free_bytes: int
    note: str | None = None  # said once when `auto` had to stream

    def device_bytes(self, device: torch.device) -> int:
        """Device memory the data holds beside the model (a resident dataset on a GPU; 0 when streamed or
        on the CPU, where the data is in the process's memory either way)."""
        return self.needed_bytes if self.name == "resident" and device.type != "cpu" else 0


def choose_placement(requested: str, needed: int, free: int, name: str, device: torch.device) -> Placement:
    """`requested` is auto, stream or resident; a resident dataset that does not fit is a DatasetError."""
    fits = needed <= int(free * RESIDENT_FIT_FRACTION)
    if requested == "resident" and not fits:
        raise DatasetError(
            Message(
                "placement: the {name} dataset needs {needed} on {device} (with the augmented "
                "copy of its training images made each epoch) but only {free} is free for this "
                "process (at most {fraction:.0%} may be used for data); use the stream placement "
                "(--placement stream)",
                name=name,
                needed=format_bytes(needed),
                device=str(device),
                free=format_bytes(free),
                fraction=RESIDENT_FIT_FRACTION,
            )
        )
    if requested == "auto":
        if fits:
            return Placement("resident", needed, free)
        return Placement(
            "stream",
            needed,
            free,
            Message(
                "the dataset ({needed}) does not fit in free device memory ({free}): streaming it from the host",
                needed=format_bytes(needed),
                free=format_bytes(free),
            ),
        )
    return Placement(requested, needed, free)


def resident_text_bytes(text_bytes: int, train_sequences: int) -> int:
    """Device bytes of a resident text: its tokens (one byte each) and an epoch's start offsets (int64 each)."""
    return text_bytes + 8 * train_sequences


def load_placed(
    config: RunConfig, device: torch.device, free_bytes: int
) -> tuple[DatasetSplits | TextSplits, Placement, tuple[str, ...]]:
    """Load the dataset for `config` and choose its placement against `free_bytes` on `device`. Also
    returns what the readers warned about (entries of an image folder left out), for the run's log: the
    warning's own text, a `Message` when the reader gave one."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        splits, placement = _load_placed(config, device, free_bytes)
    return splits, placement, tuple(message_of(w.message) for w in caught if issubclass(w.category, UserWarning))


def _load_placed(
    config: RunConfig, device: torch.device, free_bytes: int
) -> tuple[DatasetSplits | TextSplits, Placement]:
    if config.dataset in ("synthetic", SYNTHETIC_TEXT):  # generated where it will live
        n = config.synthetic_samples
        if config.dataset == SYNTHETIC_TEXT:
            needed = resident_text_bytes(synthetic_text_bytes(n, config.seq_len), n)
        else:
            needed = resident_bytes(n + val_samples(n), n, CHANNELS * SIZE * SIZE)
        placement = choose_placement(config.placement, needed, free_bytes, config.dataset, device)
        where = device if placement.name == "resident" else torch.device("cpu")
        return load_dataset(config, where), placement
    splits = load_dataset(config, torch.device("cpu"))
    if isinstance(splits, TextSplits):
        needed = resident_text_bytes(splits.nbytes, len(splits.train))
        return splits, choose_placement(config.placement, needed, free_bytes, config.dataset, device)
    pixels = splits.channels * splits.image_size[0] * splits.image_size[1]
    needed = resident_bytes(len(splits.train) + len(splits.val), len(splits.train), pixels)
    return splits, choose_placement(config.placement, needed, free_bytes, config.dataset, device)
