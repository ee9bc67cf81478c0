"""Bytes held by modules gathered into rows: one per block of the model, its layers inside, and `OUTSIDE`.

A model's blocks are its children, except that the child holding the most parameters is opened when it is a stack
of like blocks or holds one (a vision transformer's `encoder` and its `layers`, a GPT's `transformer.h`): the rows
are then the transformer's blocks, not one row holding 95% of the model. ResNet's stages (Sequentials) hold two or
three blocks each and stay whole; a ModuleList of two like modules is a stack (it is a list of blocks by
construction: gpt-tiny's two transformer blocks are rows of their own). An opened module's own work (a position
embedding added in `encoder.forward`) is a row of its own, named by its path; the model's own (`torch.flatten` in
`ResNet.forward`) is named by its class.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from torch import nn

from ..events.module_bytes import MODULE_PARTS, OUTSIDE, ModuleBytes

STACK = 3  # this many like modules in a Sequential make a stack of blocks
LIST_STACK = 2  # and this many in a ModuleList

Entry = tuple[nn.Module | None, str, int]  # (the module holding it or None, a MODULE_PARTS key, bytes)


def top_blocks(model: nn.Module) -> list[str]:
    """The paths of `model`'s blocks (see the module doc), in the model's order."""
    blocks: list[str] = []
    _open(model, "", blocks)
    return blocks


def _open(module: nn.Module, path: str, blocks: list[str]) -> None:
    children = list(module.named_children())
    largest = max((child for _, child in children), key=_parameter_count, default=None)
    for name, child in children:
        child_path = f"{path}.{name}" if path else name
        if child is largest and _parameter_count(child) > 0 and _is_or_holds_stack(child):
            _open(child, child_path, blocks)
        else:
            blocks.append(child_path)


def _parameter_count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def _is_stack(module: nn.Module) -> bool:
    if not isinstance(module, (nn.Sequential, nn.ModuleList)):
        return False
    if len(module) < (LIST_STACK if isinstance(module, nn.ModuleList) else STACK):
        return False
    return len({type(child) for child in module}) == 1


def _is_or_holds_stack(module: nn.Module) -> bool:
    return _is_stack(module) or any(_is_stack(child) for child in module.children())


def module_rows(model: nn.Module, entries: Iterable[Entry]) -> tuple[ModuleBytes, ...]:
    """`entries` summed into rows: the blocks in the model's order, opened modules' own work, then `OUTSIDE`
    (always there). Rows holding nothing are left out; each row's layers are the innermost modules, largest
    first."""
    names = {id(module): name for name, module in model.named_modules()}
    blocks = top_blocks(model)
    order = {name: index for index, name in enumerate(names.values())}
    rows: dict[str, dict[str, int]] = defaultdict(_empty)
    layers: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(_empty))
    for module, part, nbytes in entries:
        path = names.get(id(module)) if module is not None else None
        row = OUTSIDE if path is None else row_of(path, blocks, model)
        rows[row][part] += nbytes
        if path is not None and row in blocks:
            layers[row][path][part] += nbytes
    rows[OUTSIDE]  # always a row, even empty
    ranked = sorted(rows, key=lambda name: (name == OUTSIDE, order.get(name, -1) if name in blocks else len(order)))
    result = []
    for name in ranked:
        row = ModuleBytes(name, **rows[name], layers=_layers(layers.get(name, {}), name))
        if row.total_bytes or name == OUTSIDE:
            result.append(row)
    return tuple(result)


def _empty() -> dict[str, int]:
    return dict.fromkeys(MODULE_PARTS, 0)


def row_of(path: str, blocks: list[str], model: nn.Module) -> str:
    """The row of the module at `path`: the block holding it, else its own path (or the model's class)."""
    for block in blocks:
        if path == block or path.startswith(block + "."):
            return block
    return path or type(model).__name__  # an opened module's own work, or the model's


def _layers(by_path: dict[str, dict[str, int]], block: str) -> tuple[ModuleBytes, ...]:
    if set(by_path) <= {block}:  # a block that is one layer: no rows inside
        return ()
    rows = [ModuleBytes(path, **parts) for path, parts in by_path.items()]
    return tuple(sorted((row for row in rows if row.total_bytes), key=lambda row: row.total_bytes, reverse=True))
