"""The run configuration: every knob of one training run, validated on construction against the bounds table
(gpu_train_monitor.config.bounds). This module imports no torch, so the window can build its form before torch has
loaded.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .bounds import BOUNDS
from .field_checks import validate_field
from .run_checks import check_data_parallel
from .sequences import check_model_data


@dataclass(frozen=True)
class RunConfig:
    """Every knob of one training run. Frozen and validated on construction: safe to share across threads."""

    device: str = BOUNDS["device"].default
    model: str = BOUNDS["model"].default
    layers: int | None = BOUNDS["layers"].default
    width: int | None = BOUNDS["width"].default
    heads: int | None = BOUNDS["heads"].default
    attention: str = BOUNDS["attention"].default
    dataset: str = BOUNDS["dataset"].default
    data_dir: str | None = BOUNDS["data_dir"].default
    download: bool = BOUNDS["download"].default
    synthetic_samples: int = BOUNDS["synthetic_samples"].default
    batch_size: int = BOUNDS["batch_size"].default
    seq_len: int = BOUNDS["seq_len"].default
    epochs: int | None = BOUNDS["epochs"].default
    max_steps: int | None = BOUNDS["max_steps"].default
    lr: float = BOUNDS["lr"].default
    optimizer: str = BOUNDS["optimizer"].default
    momentum: float = BOUNDS["momentum"].default
    weight_decay: float = BOUNDS["weight_decay"].default
    amp: str = BOUNDS["amp"].default
    channels_last: bool = BOUNDS["channels_last"].default
    activation_checkpointing: bool = BOUNDS["activation_checkpointing"].default
    expandable_segments: str = BOUNDS["expandable_segments"].default
    compile: bool = BOUNDS["compile"].default
    cudnn_benchmark: bool = BOUNDS["cudnn_benchmark"].default
    fused_optimizer: bool = BOUNDS["fused_optimizer"].default
    placement: str = BOUNDS["placement"].default
    workers: int = BOUNDS["workers"].default
    pin_memory: bool = BOUNDS["pin_memory"].default
    non_blocking: bool = BOUNDS["non_blocking"].default
    seed: int = BOUNDS["seed"].default
    report_interval: float = BOUNDS["report_interval"].default
    on_oom: str = BOUNDS["on_oom"].default
    nproc: int = BOUNDS["nproc"].default
    sync_bn: bool = BOUNDS["sync_bn"].default

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            object.__setattr__(self, field.name, validate_field(field.name, getattr(self, field.name)))
        check_data_parallel(self)
        check_model_data(self)

    @property
    def epoch_limit(self) -> int | None:
        """Epochs the run may take: `epochs` when given, else 1, or no limit when `max_steps` bounds the
        run on its own (as max_steps does in the Hugging Face Trainer and Lightning)."""
        if self.epochs is not None:
            return self.epochs
        return None if self.max_steps is not None else 1

    def replace(self, **changes: Any) -> "RunConfig":
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values, for the summary and saved settings."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "RunConfig":
        """Build from saved values, ignoring keys this version does not know."""
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})


def option_name(field: str) -> str:
    """The command-line option a field is typed as: 'batch_size' -> '--batch-size' (the CLI, the window's child
    process and comparison errors all name a field so)."""
    return "--" + field.replace("_", "-")
