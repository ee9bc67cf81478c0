"""What the settings form says: field labels, help and tooltips from `core.config.BOUNDS`, and errors
turned into one readable line. No Qt: the form and its tests read the same text from here."""

from __future__ import annotations

import re

from core.config import BOUNDS, describe_range
from core.errors import ConfigError, UserError

LABELS = {"lr": "Learning rate", "amp": "Mixed precision", "on_oom": "On out of memory",
          "channels_last": "channels_last", "pin_memory": "pin_memory", "non_blocking": "non_blocking",
          "data_dir": "Data folder", "max_steps": "Max steps", "synthetic_samples": "Synthetic images",
          "report_interval": "Report every (s)", "compile": "torch.compile", "cudnn_benchmark": "cuDNN benchmark",
          "fused_optimizer": "Fused optimizer", "nproc": "Processes", "sync_bn": "Sync BatchNorm"}
# what the lowest position of an optional number means (None in the config)
NONE_TEXT = {"epochs": "auto", "max_steps": "no limit"}


def field_help(field: str) -> str:
    """The bound's help as the form says it: CLI options ('--max-steps') named by their form labels."""
    def label(match: re.Match[str]) -> str:
        name = match.group(1).replace("-", "_")
        return f'"{LABELS.get(name, name.replace("_", " ").capitalize())}"' if name in BOUNDS else match.group(0)

    return re.sub(r"--([a-z][a-z-]*)", label, BOUNDS[field].help)


def field_tooltip(field: str) -> str:
    """Help and what may be entered: 'passes over the training set (...) (an integer from 1 to 10000, or auto)'."""
    allowed = describe_range(field)
    if field in NONE_TEXT:
        allowed += f", or {NONE_TEXT[field]}"
    return f"{field_help(field)} ({allowed})"


def friendly(exc: UserError) -> str:
    """'Batch size: must be ...' from 'batch_size: must be ...'."""
    if isinstance(exc, ConfigError):
        label = LABELS.get(exc.field, exc.field.replace("_", " ").capitalize())
        text = str(exc)
        return f"{label}: {text.split(': ', 1)[1] if ': ' in text else text}"
    return str(exc)
