"""Attention's share of a step's memory: the bytes the attention modules hold, summed over a step's rows by module.

An attention module is one whose name is a usual one for it: `attn` (the built-in GPT's `blocks.N.attn`, GPT-2's
`h.N.attn`), `attention`, `self_attn` (PyTorch's transformer layers) or `self_attention` (torchvision's vision
transformer); its layers (`blocks.0.attn.qkv`) count with it. Plain Python: the breakdown tab and the CLI say it
beside the rows, a comparison of attentions says how it grows with the sequence length.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .module_bytes import ModuleBytes, modules_total

ATTENTION_NAMES = frozenset({"attn", "attention", "self_attn", "self_attention"})


@dataclass(frozen=True)
class AttentionBytes:
    """What a step's attention modules hold at its peak: all of it (`total_bytes`: weights, gradients and optimizer
    state too), the part that depends on the batch and the sequence (`activation_bytes`: saved for backward, and
    temporaries), and the step's peak it is a share of."""

    total_bytes: int
    activation_bytes: int
    peak_bytes: int

    @property
    def share(self) -> float:
        return self.total_bytes / self.peak_bytes if self.peak_bytes else 0.0


def is_attention(name: str) -> bool:
    """Whether the module at path `name` is an attention module or inside one."""
    return any(part in ATTENTION_NAMES for part in name.split("."))


def attention_bytes(rows: Iterable[ModuleBytes]) -> AttentionBytes | None:
    """Attention's part of `rows` (a step's memory by module); None when no row or layer is attention's."""
    rows = tuple(rows)
    found = [layer for row in rows for layer in (row.layers or (row,)) if is_attention(layer.name)]
    if not found:
        return None
    return AttentionBytes(
        total_bytes=sum(layer.total_bytes for layer in found),
        activation_bytes=sum(layer.activations_bytes + layer.temporaries_bytes for layer in found),
        peak_bytes=modules_total(rows),
    )
