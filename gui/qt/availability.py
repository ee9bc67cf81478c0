"""Whether the window can open here, asked before Qt is imported (`gpu_train_monitor.gui.app`): on Linux without a
display, or without the system libraries Qt's xcb plugin loads, Qt aborts the process, so the reason is said first;
Qt that cannot be imported at all (not installed, or its libraries missing, as on a GPU server) is said in one line
that names the headless commands. Plain Python: importing this module loads no Qt.
"""

from __future__ import annotations

import os
import sys

from gpu_train_monitor.cli.options import PROG

# Libraries Qt's xcb plugin loads that minimal Linux installs lack: (soname stem, Debian package).
XCB_LIBRARIES = (("xcb-cursor", "libxcb-cursor0"), ("xcb-icccm", "libxcb-icccm4"), ("xcb-keysyms", "libxcb-keysyms1"))


def display_problem() -> str | None:
    """Why Qt could not open a window here (it would abort the process), or None when it can."""
    if not sys.platform.startswith("linux"):
        return None
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith("xcb"):
        return None  # offscreen, wayland, vnc...: Qt reports its own problems there
    if not platform and os.environ.get("WAYLAND_DISPLAY"):
        return None
    if not os.environ.get("DISPLAY"):
        return (
            "no display to open a window on (DISPLAY is not set); use `gpu-train-monitor run` headless, "
            "or QT_QPA_PLATFORM=offscreen with --screenshot"
        )
    import ctypes.util

    missing = [package for lib, package in XCB_LIBRARIES if ctypes.util.find_library(lib) is None]
    if missing:
        return (
            f"Qt's xcb plugin needs system libraries that are missing: install {' '.join(missing)} "
            f"(e.g. sudo apt install {' '.join(missing)})"
        )
    return None


QT_PACKAGES = ("PySide6", "shiboken6", "pyqtgraph")


def is_qt_missing(exc: ImportError) -> bool:
    """Whether the window's toolkit failed to load (not installed, or its system libraries are missing, as on a
    GPU server without a display), rather than one of our own modules."""
    return (exc.name or "").split(".")[0] in QT_PACKAGES or any(name in str(exc) for name in QT_PACKAGES)


def qt_missing_line(exc: ImportError) -> str:
    return (
        f"the window cannot open: Qt could not be loaded ({exc}). The headless commands work without it: "
        f"`{PROG} run`, `{PROG} watch -- python train.py`, `{PROG} agent` (see `{PROG} run -h`)"
    )
