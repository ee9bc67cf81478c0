"""The app's icon, style sheet and .desktop file: found from a source checkout and from the built wheel."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from gpu_train_monitor.gui.qt.resources import DESKTOP, ICON, STYLE, asset, assets_dir, style_sheet

REPO = Path(__file__).resolve().parents[2]
ASSETS = (ICON, STYLE, DESKTOP)
WHEEL_ASSETS = {f"gui/assets/{name}" for name in ASSETS} | {"gui/assets/translations/gpu_train_monitor_zh_CN.ts"}
PRINT_ASSETS_DIR = "from gpu_train_monitor.gui.qt.resources import assets_dir; print(assets_dir())"


def test_assets_are_found_in_this_environment():
    folder = assets_dir()
    for name in ASSETS:
        assert (folder / name).is_file(), name
        assert asset(name) == folder / name


def test_assets_are_found_from_a_plain_source_checkout():
    # -S: no site-packages, so no installed or editable copy of the project: only the checkout on sys.path
    result = subprocess.run(
        [sys.executable, "-S", "-c", PRINT_ASSETS_DIR], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()) == REPO / "assets"


def test_the_icon_is_a_valid_svg(qapp):
    from PySide6.QtGui import QIcon
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(asset(ICON)))
    assert renderer.isValid()
    assert renderer.defaultSize().width() > 0
    assert not QIcon(str(asset(ICON))).pixmap(64, 64).isNull()


def test_the_style_sheet_is_loaded(qapp):
    text = style_sheet()
    assert "QLabel#formMessage" in text  # the inline validation message is styled
    qapp.setStyleSheet(text)
    assert qapp.styleSheet() == text
    qapp.setStyleSheet("")


def test_the_desktop_file_launches_the_app_with_its_icon():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # keys are case-sensitive
    entry.read(asset(DESKTOP), encoding="utf-8")
    section = entry["Desktop Entry"]
    assert section["Type"] == "Application"
    assert section["Exec"].split()[0] == "gpu-train-monitor"
    assert section["Icon"] == Path(ICON).stem
    assert section["Name"] == "GPU Training Monitor"


def test_the_built_wheel_carries_the_assets_and_finds_them(tmp_path):
    source = tmp_path / "src"  # build from a copy: the checkout gets no build/ or egg-info litter
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (REPO / name).is_file():
            shutil.copy2(REPO / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("core", "gui", "assets"):
        shutil.copytree(REPO / folder, source / folder, ignore=ignore)
    dist = tmp_path / "dist"
    result = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    wheels = list(dist.glob("gpu_train_monitor-*.whl"))
    assert len(wheels) == 1

    with zipfile.ZipFile(wheels[0]) as wheel:
        names = set(wheel.namelist())
        assert WHEEL_ASSETS <= names
        assert not any(n.startswith("assets/") for n in names)  # mapped into the package, not top-level
        for name in WHEEL_ASSETS:
            assert wheel.read(name) == (REPO / "assets" / Path(name).relative_to("gui/assets")).read_bytes()
        site = tmp_path / "site"
        wheel.extractall(site)

    # installed from the wheel (no checkout on the path): the assets come from the package
    env = {**os.environ, "PYTHONPATH": str(site)}
    found = subprocess.run(
        [sys.executable, "-S", "-c", PRINT_ASSETS_DIR],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()) == site / "gui" / "assets"
