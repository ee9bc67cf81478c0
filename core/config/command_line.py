"""The command line that runs a config in a process of its own: `python -m gpu_train_monitor run` with every field
spelled out.

The window's data-parallel child (gpu_train_monitor.gui.launch.child) and the remote agent's detached runs
(gpu_train_monitor.remote) start the same command, so a run started either way trains exactly as the config says.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .bounds import BOUNDS
from .run_config import RunConfig, option_name


def command_line(
    config: RunConfig, store_path: Path | str, resume: str | None = None, python: str = sys.executable
) -> list[str]:
    """`python -m gpu_train_monitor run` with every field of `config` spelled out (defaults too: the CLI's presets and
    defaults must not change what the form shows), recording into `store_path`. No checkpoint options: a
    data-parallel run saves none (and refuses `resume`, which is passed on for the CLI to say so)."""
    args = [python, "-m", "gpu_train_monitor", "run"]
    for field in BOUNDS:
        value = getattr(config, field)
        if value is None:
            continue
        flag = option_name(field)
        if isinstance(value, bool):
            args.append(flag if value else "--no-" + flag[2:])
        else:
            args.append(f"{flag}={value!r}" if isinstance(value, float) else f"{flag}={value}")
    if resume:
        args.append(f"--resume={resume}")
    return args + [f"--runs-db={store_path}"]
