"""What the window keeps between launches: the form's values, the window geometry and splitter sizes."""

from __future__ import annotations

import json
from collections.abc import Callable

from PySide6.QtCore import QByteArray, QCoreApplication, QSettings
from PySide6.QtWidgets import QMainWindow, QSplitter

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.gui.form.settings_form import SettingsForm


def restore(
    settings: QSettings,
    window: QMainWindow,
    form: SettingsForm,
    splitters: dict[str, QSplitter],
    warn: Callable[[str], None],
) -> None:
    """Apply saved values; a config this version cannot use keeps the defaults and says so via `warn`."""
    raw = settings.value("config")
    if raw:
        try:
            form.set_config(RunConfig.from_dict(json.loads(str(raw))))
        except Exception:  # settings from another version, or edited by hand: keep the defaults
            warn(QCoreApplication.translate("window_settings", "saved settings could not be used; defaults restored"))
    geometry = settings.value("geometry")
    if isinstance(geometry, QByteArray):
        window.restoreGeometry(geometry)
    for name, splitter in splitters.items():
        state = settings.value(name)
        if isinstance(state, QByteArray):
            splitter.restoreState(state)


def save(settings: QSettings, window: QMainWindow, form: SettingsForm, splitters: dict[str, QSplitter]) -> None:
    settings.setValue("config", json.dumps(form.values()))
    settings.setValue("geometry", window.saveGeometry())
    for name, splitter in splitters.items():
        settings.setValue(name, splitter.saveState())
    settings.sync()


def user_settings() -> QSettings:
    """The user's own settings (the window's layout, the form, the language), where Qt keeps them."""
    return QSettings("gpu-train-monitor", "GPU Training Monitor")
