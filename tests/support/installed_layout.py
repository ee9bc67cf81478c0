"""The sources laid out as the wheel installs them, for tools that read packages from their folders.

The repository keeps `core/` and `gui/` side by side; installed, `gui/` is the sub-package `gpu_train_monitor.gui`
inside `gpu_train_monitor/` (pyproject.toml and setup.py map them). An editable install maps the names with an
import hook, which tools that walk folders (grimp, import-linter) do not follow: they get this copy instead.
"""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NAME = "gpu_train_monitor"


def installed_layout(folder: Path) -> Path:
    """Copy core/ to `folder`/gpu_train_monitor and gui/ to `folder`/gpu_train_monitor/gui; returns `folder`
    (the entry to put first on sys.path)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "core", folder / NAME, ignore=ignore)
    shutil.copytree(REPO / "gui", folder / NAME / "gui", ignore=ignore)
    return folder
