"""Finding the app's assets (icon, style sheet, .desktop file) from a wheel and a source checkout alike.

The build maps the top-level `assets/` folder into the package `gpu_train_monitor.gui.assets`; an editable install
(`pip install -e .`) does not make that folder importable (it has no `__init__.py`), so there the folder beside
`gui/` is used.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

ICON = "gpu-train-monitor.svg"
STYLE = "style.qss"
DESKTOP = "gpu-train-monitor.desktop"


def assets_dir() -> Path:
    """The folder holding the assets, wherever the app was installed from."""
    try:
        # gpu_train_monitor.gui.assets has no __init__.py: files() gives a MultiplexedPath, whose str() is not a path;
        # join first
        icon = resources.files("gpu_train_monitor.gui.assets") / ICON
        if icon.is_file():
            return Path(str(icon)).parent
    except (ModuleNotFoundError, TypeError):
        pass
    return Path(__file__).resolve().parents[2] / "assets"  # gui/qt/resources.py -> the checkout


def asset(name: str) -> Path:
    return assets_dir() / name


def style_sheet() -> str:
    path = asset(STYLE)
    return path.read_text(encoding="utf-8") if path.is_file() else ""
