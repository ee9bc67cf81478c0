"""The table `predict --by-module` and `runs show --by-module` print: a step's memory by module, one row per block
(its layers beneath it with `--by-module layers`), the rows adding up to the total shown under them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base.text import format_bytes, printable
from ..events.attention_bytes import attention_bytes
from ..events.module_bytes import MODULE_PARTS, ModuleBytes, modules_total

BY_MODULE_CHOICES = ("blocks", "layers")
_HEADINGS = ("activations", "params", "grads", "optimizer", "temporaries")
_NAME_WIDTH = 34


def add_by_module_option(parser: Any) -> None:
    parser.add_argument(
        "--by-module",
        nargs="?",
        const="blocks",
        choices=BY_MODULE_CHOICES,
        metavar="blocks|layers",
        help="the step's memory by module: the model's blocks (default), or their layers too; the rows, with one "
        "for the batch, the loss and the rest (outside modules), add up to the step's peak",
    )


def module_lines(rows: Sequence[ModuleBytes], *, layers: bool = False) -> list[str]:
    """The table of `rows` (see the module doc), names escaped for the terminal."""
    total = modules_total(rows)
    lines = [
        f"  {'module':<{_NAME_WIDTH}} {'total':>10} {'share':>6} " + " ".join(f"{heading:>11}" for heading in _HEADINGS)
    ]
    for row in rows:
        lines.append(_line(row, total, 0))
        if layers:
            lines += [_line(layer, total, 2) for layer in row.layers]
    lines.append(f"  {'total':<{_NAME_WIDTH}} {format_bytes(total):>10} {'100%':>6}")
    attention = attention_bytes(rows)
    if attention is not None:  # a transformer: its attention modules of every block, summed
        lines.append(
            f"  attention: {format_bytes(attention.total_bytes)} ({attention.share:.0%} of the peak), "
            f"{format_bytes(attention.activation_bytes)} of it activations"
        )
    return lines


def _line(row: ModuleBytes, total: int, indent: int) -> str:
    name = printable(" " * indent + row.name)
    if len(name) > _NAME_WIDTH:
        name = name[: _NAME_WIDTH - 1] + "…"
    share = f"{row.total_bytes / total:.0%}" if total else "-"
    parts = " ".join(f"{format_bytes(getattr(row, key)):>11}" for key in MODULE_PARTS)
    return f"  {name:<{_NAME_WIDTH}} {format_bytes(row.total_bytes):>10} {share:>6} {parts}"


def modules_json(rows: Sequence[ModuleBytes]) -> list[dict[str, Any]]:
    """The `modules` list of the JSON: each row's parts and its layers."""
    return [row.as_json() for row in rows]


def recorded_modules(document: dict[str, Any]) -> dict[str, Any]:
    """A recorded run's memory by module, as `runs show --by-module --json` has it: `measured`, the fullest
    attributed step's rows (a breakdown sampled by module), and `predicted`, a watched run's predicted step's; each
    `{"step", "total_bytes", "modules"}` or None when the run has none."""
    from ..events.module_bytes import modules_from_json

    def entry(event: dict[str, Any] | None) -> dict[str, Any] | None:
        if event is None:
            return None
        rows = modules_from_json(event.get("modules"))
        return {"step": event.get("step"), "total_bytes": modules_total(rows), "modules": modules_json(rows)}

    measured = [b for b in document.get("memory_breakdowns") or () if b.get("modules")]
    fullest = max(measured, key=lambda b: modules_total(modules_from_json(b["modules"])), default=None)
    predicted = next(
        (e for e in document.get("other_events") or () if e.get("kind") == "StepPredicted" and e.get("modules")), None
    )
    return {"measured": entry(fullest), "predicted": entry(predicted)}


def recorded_module_lines(document: dict[str, Any], *, layers: bool = False) -> list[str]:
    """`recorded_modules` as text, or a line saying why there is none."""
    from ..events.module_bytes import modules_from_json

    found = recorded_modules(document)
    lines: list[str] = []
    for key, title in (("measured", "measured at step {step}"), ("predicted", "predicted at step {step}")):
        entry = found[key]
        if entry is not None:
            lines.append(f"memory by module ({title.format(step=entry['step'])})")
            lines += module_lines(modules_from_json(entry["modules"]), layers=layers)
    if not lines:
        lines.append(
            "memory by module: none recorded (a run is split by module on its second sampled step and then once a "
            "minute; runs recorded before this version have none)"
        )
    return lines
