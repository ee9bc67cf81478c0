"""The command line that watches a script in a process of its own: `python -P -m gpu_train_monitor watch
--runs-db=<store> [--name=N] -- <the script's command>`.

The window (File ▸ Watch a script…, gpu_train_monitor.gui.launch.watch_command) and the remote agent
(gpu_train_monitor.remote.agent.ops) start the same command, so a script is watched alike either way. `-P`: `-m`
would put the working folder first on sys.path, and a research folder's own `core/` (or a `gpu_train_monitor`
folder beside the script) would then be imported in place of ours.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path


def watch_command_line(
    store_path: Path | str,
    script: Sequence[str],
    name: str = "",
    options: Sequence[str] = (),
    safe_path: bool = True,
    python: str = sys.executable,
) -> list[str]:
    """`python -P -m gpu_train_monitor watch` recording into `store_path` as run `name` (empty: the default name),
    with `options` for the watch itself, then `--` and `script`'s command (its Python first); `safe_path` False
    leaves out `-P`."""
    args = [python, *(["-P"] if safe_path else []), "-m", "gpu_train_monitor", "watch", f"--runs-db={store_path}"]
    if name.strip():
        args.append(f"--name={name.strip()}")
    return [*args, *options, "--", *script]
