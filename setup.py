"""Packages found, never listed: setuptools' discovery under each folder, mapped to the one import name.

The repository keeps the folders the product fixes (core/, gui/, assets/); what installs is `gpu_train_monitor`
(core/), `gpu_train_monitor.gui` (gui/) and `gpu_train_monitor.gui.assets` (assets/, data only). Everything else
about the distribution is in pyproject.toml.
"""

from setuptools import find_packages, setup

FOLDERS = {"gpu_train_monitor": "core", "gpu_train_monitor.gui": "gui", "gpu_train_monitor.gui.assets": "assets"}


def packages_under(name: str, folder: str) -> list[str]:
    """`name` and every package below `folder` (a folder with an __init__.py), named under `name`."""
    return [name, *(f"{name}.{found}" for found in find_packages(folder))]


setup(
    package_dir=FOLDERS,
    packages=[package for name, folder in FOLDERS.items() for package in packages_under(name, folder)],
)
