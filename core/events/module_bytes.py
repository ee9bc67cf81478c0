"""A step's memory by module: one row per block of the model (its leaf layers inside), and one row for what no
module holds, so that the rows add up to the step's total.

Plain values (frozen, tuples): rows travel inside `MemoryBreakdown` and `StepPredicted` events, and the run store
keeps them as JSON (lists of objects), which `modules_from_json` reads back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

OUTSIDE = "(outside modules)"  # the batch, the loss, and what ran in no module of the model
MODULE_PARTS = ("activations_bytes", "params_bytes", "grads_bytes", "optimizer_bytes", "temporaries_bytes")


@dataclass(frozen=True)
class ModuleBytes:
    """What one module (a block of the model, or one of its layers) holds at the step's peak, in bytes.
    `activations_bytes`: what it saved for backward (the `OUTSIDE` row: the batch too); `temporaries_bytes`: the
    rest of what it made that is live at the peak; `layers`: the same per layer inside a block (the innermost
    module that ran the code), largest first."""

    name: str
    activations_bytes: int = 0
    params_bytes: int = 0
    grads_bytes: int = 0
    optimizer_bytes: int = 0
    temporaries_bytes: int = 0
    layers: tuple[ModuleBytes, ...] = ()

    @property
    def total_bytes(self) -> int:
        return sum(getattr(self, key) for key in MODULE_PARTS)

    def as_json(self, with_layers: bool = True) -> dict[str, Any]:
        """The row as the CLI's JSON has it (`layers` left out when not asked for)."""
        row: dict[str, Any] = {"name": self.name, **{key: getattr(self, key) for key in MODULE_PARTS}}
        if with_layers:
            row["layers"] = [layer.as_json(False) for layer in self.layers]
        return row


def modules_total(rows: Iterable[ModuleBytes]) -> int:
    return sum(row.total_bytes for row in rows)


def largest(rows: Sequence[ModuleBytes], count: int, *, key: str = "total_bytes") -> list[ModuleBytes]:
    """The `count` rows holding the most (by `key`), the outside row left out."""
    inside = [row for row in rows if row.name != OUTSIDE]
    return sorted(inside, key=lambda row: getattr(row, key), reverse=True)[:count]


def largest_savings(
    before: Sequence[ModuleBytes], after: Sequence[ModuleBytes], count: int = 3
) -> tuple[tuple[str, int], ...]:
    """The `count` modules (outside aside) whose bytes at the peak fall the most from `before` to `after` (a step
    predicted without and with a change, e.g. activation checkpointing), with how much; only those that fall."""
    held = {row.name: row.total_bytes for row in after}
    falls = [(row.name, row.total_bytes - held.get(row.name, 0)) for row in before if row.name != OUTSIDE]
    return tuple(sorted((fall for fall in falls if fall[1] > 0), key=lambda fall: fall[1], reverse=True)[:count])


def modules_from_json(data: Any) -> tuple[ModuleBytes, ...]:
    """Rows as stored (lists of objects, `layers` nested); what is not a row is left out."""
    if not isinstance(data, (list, tuple)):
        return ()
    rows = []
    for item in data:
        if isinstance(item, ModuleBytes):
            rows.append(item)
        elif isinstance(item, Mapping) and isinstance(item.get("name"), str):
            parts = {key: _count(item.get(key)) for key in MODULE_PARTS}
            rows.append(ModuleBytes(item["name"], **parts, layers=modules_from_json(item.get("layers"))))
    return tuple(rows)


def _count(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and value == value else 0
