"""Presets: plain named sets of RunConfig overrides, listed by `gpu-train-monitor presets`.

A preset is applied under whatever the user sets explicitly (`--preset speedrun --batch-size 256` keeps
the preset's other choices and the user's batch size), in the CLI and the form alike. A preset may carry
a second, smaller set for runs on the CPU: what makes a GPU fast can make a CPU slow (bf16 autocast runs
~10x slower than fp32 on a CPU without native bf16, measured on a 2-core AVX2 EPYC; torch.compile spends
30 s to minutes compiling there, more than a short run gains).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..base.errors import ConfigError
from ..base.readonly import ReadOnlyDict
from ..base.text import Message
from .field_checks import validate_field
from .run_config import RunConfig


@dataclass(frozen=True)
class Preset:
    name: str
    description: str  # a `Message`: the window shows it translated
    overrides: Mapping[str, Any]
    cpu_overrides: Mapping[str, Any]  # applied over `overrides` when the run's device is the CPU

    def apply(self, config: RunConfig, device_kind: str) -> RunConfig:
        """`config` with this preset's settings for a `device_kind` ('cpu', 'cuda', 'mps') device."""
        return config.replace(**self.settings(device_kind))

    def settings(self, device_kind: str) -> dict[str, Any]:
        return {**self.overrides, **(self.cpu_overrides if device_kind == "cpu" else {})}


def _preset(name: str, description: str, cpu: Mapping[str, Any], **overrides: Any) -> Preset:
    for field, value in {**overrides, **cpu}.items():  # a bad value fails at import, in every test run
        validate_field(field, value)
    return Preset(name, description, ReadOnlyDict(overrides), ReadOnlyDict(cpu))


PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        _preset(
            "speedrun",
            Message(
                "the fastest configuration offered: speedrun-net (a small CIFAR net in the style "
                "of airbench) on a CIFAR-sized synthetic set kept on the device, bf16, "
                "channels_last, torch.compile, fused optimizer, batch 1024 (on a CPU: fp32 and no "
                "compile)"
            ),
            cpu={"amp": "off", "compile": False},
            model="speedrun-net",
            synthetic_samples=50_000,
            placement="resident",
            amp="bf16",
            channels_last=True,
            compile=True,
            fused_optimizer=True,
            batch_size=1024,
            lr=0.2,
            optimizer="sgd",
            momentum=0.9,
            weight_decay=5e-4,
        ),
    )
}


def preset(name: str) -> Preset:
    """The preset called `name`, or a ConfigError that lists the known ones."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError(
            "preset", Message("unknown preset {name}; known: {known}", name=repr(name), known=", ".join(PRESETS))
        ) from None


def preset_text(value: Preset) -> str:
    """The overrides in one line, and the CPU's changes, for `gpu-train-monitor presets`."""
    text = ", ".join(f"{field}={_shown(v)}" for field, v in value.overrides.items())
    if value.cpu_overrides:
        text += "; on a CPU: " + ", ".join(f"{field}={_shown(v)}" for field, v in value.cpu_overrides.items())
    return text


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
