"""Presets: plain named sets of RunConfig overrides, listed by `gpu-train-monitor presets`.

A preset is applied under whatever the user sets explicitly (`--preset speedrun --batch-size 256` keeps
the preset's other choices and the user's batch size), in the CLI and the form alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.config import RunConfig, validate_field
from core.errors import ConfigError
from core.readonly import ReadOnlyDict


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    overrides: Mapping[str, Any]

    def apply(self, config: RunConfig) -> RunConfig:
        return config.replace(**self.overrides)


def _preset(name: str, description: str, **overrides: Any) -> Preset:
    for field, value in overrides.items():  # a preset with a bad value fails at import, in every test run
        validate_field(field, value)
    return Preset(name, description, ReadOnlyDict(overrides))


PRESETS: dict[str, Preset] = {preset.name: preset for preset in (
    _preset("speedrun", "the fastest configuration offered: speedrun-net (a small CIFAR net in the style of "
                        "airbench) on a CIFAR-sized synthetic set kept on the device, bf16, channels_last, "
                        "torch.compile, fused optimizer, batch 1024",
            model="speedrun-net", synthetic_samples=50_000, placement="resident", amp="bf16", channels_last=True,
            compile=True, fused_optimizer=True, batch_size=1024, lr=0.2, optimizer="sgd", momentum=0.9,
            weight_decay=5e-4),
)}


def preset(name: str) -> Preset:
    """The preset called `name`, or a ConfigError that lists the known ones."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError("preset", f"unknown preset {name!r}; known: {', '.join(PRESETS)}") from None


def preset_text(value: Preset) -> str:
    """One line per override, for `gpu-train-monitor presets`."""
    return ", ".join(f"{field}={_shown(v)}" for field, v in value.overrides.items())


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
