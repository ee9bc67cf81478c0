"""The app's icon, style sheet and .desktop file: found from an editable checkout and from the built wheel, which
carries every module of core/ and gui/ under the one import name `gpu_train_monitor` and nothing else."""

from __future__ import annotations

import configparser
import email
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import gpu_train_monitor
from gpu_train_monitor.gui.qt.resources import DESKTOP, ICON, STYLE, asset, assets_dir, style_sheet

REPO = Path(__file__).resolve().parents[2]
ASSETS = (ICON, STYLE, DESKTOP)
PRINT_ASSETS_DIR = "from gpu_train_monitor.gui.qt.resources import assets_dir; print(assets_dir())"


def test_assets_are_found_in_this_environment():
    folder = assets_dir()
    for name in ASSETS:
        assert (folder / name).is_file(), name
        assert asset(name) == folder / name


def test_an_editable_install_finds_the_checkouts_assets():
    assert assets_dir() == REPO / "assets"  # `pip install -e .`: the folder itself, edits seen at once


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


def expected_wheel_files() -> dict[str, Path]:
    """What the wheel must carry, by its path in the wheel: every module of core/ (as gpu_train_monitor/) and of gui/
    (as gpu_train_monitor/gui/), the watch's start-up file, and every asset the app loads."""
    expected = {}
    for folder, prefix in (("core", "gpu_train_monitor"), ("gui", "gpu_train_monitor/gui")):
        for path in (REPO / folder).rglob("*.py"):
            if "__pycache__" not in path.parts:
                expected[f"{prefix}/{path.relative_to(REPO / folder).as_posix()}"] = path
    loaded = [REPO / "assets" / name for name in ASSETS] + sorted((REPO / "assets" / "translations").glob("*.ts"))
    for path in loaded:
        expected[f"gpu_train_monitor/gui/assets/{path.relative_to(REPO / 'assets').as_posix()}"] = path
    return expected


@pytest.fixture(scope="module")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel `pip install .` would build, built from a copy (the checkout gets no build/ or egg-info litter)."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
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
    return wheels[0]


def test_the_wheel_carries_every_module_and_asset_under_one_import_name(built_wheel: Path):
    with zipfile.ZipFile(built_wheel) as wheel:
        names = set(wheel.namelist())
        expected = expected_wheel_files()
        missing = sorted(set(expected) - names)
        assert not missing, f"left out of the wheel: {missing}"
        for name, path in expected.items():
            assert wheel.read(name) == path.read_bytes(), name
        modules = {name for name in names if name.endswith(".py")}
        assert modules == {name for name in expected if name.endswith(".py")}  # no module twice, none of another tree
        assert {name.split("/")[0] for name in names} == {
            "gpu_train_monitor",
            built_wheel.name.split("-py")[0] + ".dist-info",
        }
        assert "gpu_train_monitor/watch/site/sitecustomize.py" in names  # the start-up file of `watch --`


def test_the_wheel_says_its_version_licence_python_and_command(built_wheel: Path):
    with zipfile.ZipFile(built_wheel) as wheel:
        info = built_wheel.name.split("-py")[0] + ".dist-info"
        metadata = email.message_from_bytes(wheel.read(f"{info}/METADATA"))
        assert metadata["Version"] == gpu_train_monitor.__version__
        assert metadata["License-Expression"] == "MIT"
        assert metadata["Requires-Python"] == ">=3.11"
        assert wheel.read(f"{info}/licenses/LICENSE") == (REPO / "LICENSE").read_bytes()
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
        assert "gpu-train-monitor = gpu_train_monitor.gui.app:main" in entry_points


def test_the_wheel_finds_its_assets_in_the_package(built_wheel: Path, tmp_path: Path):
    with zipfile.ZipFile(built_wheel) as wheel:
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
    assert Path(found.stdout.strip()) == site / "gpu_train_monitor" / "gui" / "assets"
