"""`gpu-train-monitor --version`: the app's version, and torch's and Python's, which decide what it can do.

Read from the installed metadata, not by importing torch: the answer comes at once, and it comes even where torch
is broken (that is often why someone asks).
"""

from __future__ import annotations

import platform
from importlib import metadata

from .. import __version__
from .options import PROG


def version_line() -> str:
    """'gpu-train-monitor 0.2.0 (torch 2.14.1, Python 3.11.7)'."""
    try:
        torch = f"torch {metadata.version('torch')}"
    except metadata.PackageNotFoundError:
        torch = "torch not installed"
    return f"{PROG} {__version__} ({torch}, Python {platform.python_version()})"
