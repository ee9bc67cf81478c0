"""The checks a run configuration needs beyond each field's own bound in `gpu_train_monitor.config.bounds.BOUNDS`.

Its own module because these rules look past one field's type and range: the fields a data-parallel run needs
to agree, a batch against the training set once its size is known, and a path's names against what file
systems allow. `RunConfig` runs the first and the last on construction; the run and the form run the batch
check where they know the training set's size.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.errors import ConfigError
from ..base.text import Message

if TYPE_CHECKING:
    from .run_config import RunConfig

NAME_MAX = 255  # bytes in one file or folder name on Linux and macOS file systems (Windows counts characters)


def check_data_parallel(config: RunConfig) -> None:
    """What a data-parallel run (nproc > 1) needs of the other fields: a batch that splits evenly, one device
    kind (each process takes its own GPU), and out-of-memory handling every process agrees on."""
    n = config.nproc
    if n == 1:
        return
    if config.batch_size % n:
        raise ConfigError(
            "batch_size",
            Message(
                "{batch_size} does not split evenly over {processes} processes; use a "
                "multiple of {multiple} (each process trains batch_size / nproc "
                "images a step)",
                batch_size=config.batch_size,
                processes=n,
                multiple=n,
            ),
        )
    if config.device not in ("auto", "cpu", "cuda"):
        raise ConfigError(
            "device",
            Message(
                "{device} names one device, but {processes} processes each take their "
                "own: use cuda (one GPU each), cpu or auto",
                device=repr(config.device),
                processes=n,
            ),
        )
    if config.on_oom == "shrink":
        raise ConfigError(
            "on_oom",
            Message(
                "shrink is for one process: the processes of a data-parallel run would "
                "each halve their batch at different steps; use stop, or fewer images "
                "per step"
            ),
        )


def check_batch_fits(batch_size: int, train_images: int | None, seq_len: int | None = None) -> None:
    """ConfigError when a batch is larger than the training set (`None`: not known yet); `seq_len` when the set is
    a text's sequences. The run checks it once the data is loaded; the form checks it before Start wherever the
    size is known earlier."""
    if seq_len is not None and train_images is not None and batch_size > train_images:
        raise ConfigError(
            "batch_size",
            Message(
                "{batch_size} is larger than the training set ({sequences:,} sequences of {seq_len} tokens); use at "
                "most {limit}, or shorter sequences",
                batch_size=batch_size,
                sequences=train_images,
                seq_len=seq_len,
                limit=train_images,
            ),
        )
    if train_images is not None and batch_size > train_images:
        raise ConfigError(
            "batch_size",
            Message(
                "{batch_size} is larger than the training set ({images:,} images); use at most {limit}",
                batch_size=batch_size,
                images=train_images,
                limit=train_images,
            ),
        )


def check_name_lengths(name: str, path: str) -> None:
    """A name longer than any file system allows is bad input named at once, not an OSError mid-run."""
    if os.name == "nt":
        return
    for part in Path(path).parts:
        length = len(os.fsencode(part))
        if length > NAME_MAX:
            raise ConfigError(
                name,
                Message(
                    "the folder name {start}... in it is {length} bytes long; file systems allow at most {limit}",
                    start=part[:16],
                    length=length,
                    limit=NAME_MAX,
                ),
            )
