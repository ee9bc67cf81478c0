"""The form's preset choice: "none" or a named set of settings from `gpu_train_monitor.config.presets.PRESETS`.

Choosing a preset writes its settings for the selected device into the form (a preset may set less on
a CPU, where bf16 or compile would slow it down), and the user can change any of them after; the combo
then shows the preset for as long as the form still holds every setting it made, and "none" once one
differs, so it never claims a preset the next run would not be. Nothing to remember between launches:
the form's saved values say by themselves whether they match a preset.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QWidget

from gpu_train_monitor.config.bounds import BOUNDS
from gpu_train_monitor.config.presets import PRESETS
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.core_text import core_text

NONE_DESCRIPTION = QT_TRANSLATE_NOOP(
    "PresetRow",
    "no preset: every setting as you set it. Choosing none after a "
    "preset puts the settings presets change back to their defaults",
)


class PresetRow(QWidget):
    """A "Preset" combo and the chosen preset's description; `chosen(name)` when the user picks one
    ("" for none). The form applies it and calls `sync` with its values after every change."""

    chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.matched = ""  # the preset the form held at the last `sync` ("" for none)
        self.combo = QComboBox()
        self.combo.setObjectName("preset")
        self.combo.addItem(self.tr("none"), "")
        none_tip = QCoreApplication.translate("PresetRow", NONE_DESCRIPTION)
        self.combo.setItemData(0, none_tip, Qt.ItemDataRole.ToolTipRole)
        for name, preset in PRESETS.items():  # a preset's name is an identifier (the CLI's --preset takes it)
            self.combo.addItem(name, name)
            self.combo.setItemData(self.combo.count() - 1, core_text(preset.description), Qt.ItemDataRole.ToolTipRole)
        self.combo.activated.connect(self._on_activated)  # the user's choice only, not `sync`
        self.description = QLabel()
        self.description.setObjectName("presetDescription")
        self.description.setWordWrap(True)
        self.description.setStyleSheet(f"color: {palette.QUIET};")
        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        label = QLabel(self.tr("Preset"))
        label.setToolTip(
            self.tr(
                "A named set of settings (gpu-train-monitor presets lists them); any setting can be "
                "changed after choosing one"
            )
        )
        layout.addRow(label, self.combo)
        layout.addRow(self.description)
        self._show(None)

    @property
    def current(self) -> str:
        return str(self.combo.currentData() or "")

    def sync(self, values: Mapping[str, Any], device_kind: str) -> None:
        """Show the preset whose every setting (for a `device_kind` device) the form holds, else none."""
        name = next(
            (
                name
                for name, preset in PRESETS.items()
                if all(values.get(field) == value for field, value in preset.settings(device_kind).items())
            ),
            "",
        )
        self.matched = name
        if name != self.current:
            self.combo.blockSignals(True)
            self.combo.setCurrentIndex(max(self.combo.findData(name), 0))
            self.combo.blockSignals(False)
        self._show(name or None)

    def _show(self, name: str | None) -> None:
        text = core_text(PRESETS[name].description) if name else ""
        self.description.setText(text[:1].upper() + text[1:])  # core's is a clause: here it starts a line
        self.description.setVisible(bool(text))
        self.combo.setToolTip(text if name else QCoreApplication.translate("PresetRow", NONE_DESCRIPTION))

    @Slot(int)
    def _on_activated(self, _index: int) -> None:
        self.chosen.emit(self.current)


def overrides_for(name: str, matched: str, device_kind: str) -> dict[str, Any]:
    """What choosing `name` changes on a `device_kind` device: the preset's settings, or for none (after
    the form matched preset `matched`) the defaults of the settings that preset made; nothing when none
    was already shown."""
    if name:
        return PRESETS[name].settings(device_kind)
    if not matched:
        return {}
    return {field: BOUNDS[field].default for field in PRESETS[matched].settings(device_kind)}
