"""What `runs list`, `runs show` and `runs export` print and write from a run store: this machine's, or the
temporary copy of another machine's run (gpu_train_monitor.cli.remote_commands), so both say it in the same words.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from ..base.outputs import strict_json
from ..base.text import printable
from .options import PROG

if TYPE_CHECKING:  # the store loads when an action runs
    from ..store.run_store import RunRow, RunStore


def print_runs(rows: list[RunRow], search: str, as_json: bool, where: str) -> int:
    """`runs list`'s output for `rows` (this store's, or a remote one's): a table, JSON, or that there are none
    `where` ("in PATH", "on HOST (PATH)"); what a remote store wrote is printed with its control characters
    escaped (a run name or path must not drive the terminal)."""
    from ..export.run_export import run_facts
    from .runs_text import runs_table
    from .stdout import out

    if as_json:
        out(json.dumps(strict_json([run_facts(row) for row in rows]), indent=2, allow_nan=False))
    elif not rows:
        out(printable(f"no runs match {search!r} {where}" if search.strip() else f"no runs yet {where}"))
    else:
        out(runs_table(rows))
    return 0


def print_run(store: RunStore, run_id: int, as_json: bool, by_module: str | None = None) -> int:
    """`runs show`'s output: everything recorded about run `run_id` of `store`, as text or JSON; `by_module`
    ("blocks" or "layers"): with its memory by module too."""
    from ..export.run_export import run_document
    from .module_text import recorded_module_lines, recorded_modules
    from .runs_text import run_text
    from .stdout import out

    document = run_document(store, run_id, series=False)
    if as_json:
        if by_module:
            document = {**document, "by_module": recorded_modules(document)}
        out(json.dumps(strict_json(document), indent=2, allow_nan=False))
        return 0
    text = run_text(document)
    if by_module:
        text += "\n" + "\n".join(recorded_module_lines(document, layers=by_module == "layers"))
    out(printable(text, newlines=True))
    return 0


def write_export(store: RunStore, run_id: int, fmt: str, out_path: str, smoothing: float, store_option: str) -> int:
    """`runs export`: write run `run_id` of `store` as `fmt` to `out_path` and print the paths written;
    `store_option` names the option that chose the store ("" for the default one), for the export's notes."""
    from ..export.run_export import export_run
    from .stdout import out

    row = store.run(run_id)
    paths = export_run(store, run_id, fmt, out_path, smoothing, store_option)
    for path in paths:
        out(str(path))
    if row.status == "running":
        print(
            f"{PROG}: note: run {run_id} was still running: exported its {row.steps:,} steps recorded so far",
            file=sys.stderr,
        )
    if fmt == "tensorboard":
        print(f"view it with: tensorboard --logdir {paths[0].parent.parent if paths else out_path}", file=sys.stderr)
    return 0
