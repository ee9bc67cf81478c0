"""One widget per `core.config.run_config.BOUNDS` field, and its value read and written by the widget's kind.

The widget follows the bound: a combo box for choices, a check box for a flag, a spin box over the range
(a lowest position meaning "not set" for an optional number, steps by factors for a log-scale float), a
line edit for the data folder. The settings form places them, and reads and writes the fields whose
widgets need more than their kind says (the model, the dataset, the device).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from core.config.run_config import BOUNDS, BUILTIN_MODELS
from core.config.user_callables import SPEC_FORM
from gui.form.text import choice_text, field_tooltip, none_text
from gui.qt.widgets import OptionalSpinBox, ScientificSpinBox


def make_field_widget(field: str, on_changed: Callable[..., None],
                      on_data_dir_typed: Callable[[str], None]) -> QWidget:
    """The widget for `field`, ranged, filled and tooltipped from its bound; a change calls `on_changed`
    (the data folder calls `on_data_dir_typed` per keystroke and `on_changed` once editing ends)."""
    bound = BOUNDS[field]
    widget: QWidget
    if field == "device":
        widget = QComboBox()
        widget.addItem(QCoreApplication.translate("form_widgets", "auto (best available)"), "auto")
        widget.addItem("cpu", "cpu")
        widget.currentIndexChanged.connect(on_changed)
    elif field in ("model", "dataset"):  # editable: your own is typed as package.module:factory
        widget = QComboBox()
        widget.setEditable(True)
        for choice in (BUILTIN_MODELS if field == "model" else bound.choices or ()):
            widget.addItem(choice_text(field, choice), choice)  # read back by its data (SettingsForm.value)
        widget.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        placeholder = QCoreApplication.translate("form_widgets", "a name from the list, or {spec_form}")
        widget.lineEdit().setPlaceholderText(placeholder.format(spec_form=SPEC_FORM))
        widget.currentTextChanged.connect(on_changed)
    elif bound.choices:
        widget = QComboBox()
        for choice in bound.choices:
            widget.addItem(choice_text(field, choice), choice)
        widget.currentIndexChanged.connect(on_changed)
    elif bound.kind is bool:
        widget = QCheckBox()
        widget.toggled.connect(on_changed)
    elif bound.kind is int and bound.optional:
        widget = OptionalSpinBox(int(bound.minimum), int(bound.maximum), none_text(field))
        widget.valueChanged.connect(on_changed)
    elif bound.kind is int:
        widget = QSpinBox()
        widget.setRange(int(bound.minimum), int(bound.maximum))
        widget.valueChanged.connect(on_changed)
    elif bound.kind is float:
        widget = ScientificSpinBox() if bound.log_scale else QDoubleSpinBox()
        if not bound.log_scale:
            widget.setDecimals(4)  # decimals before the range: the range is rounded to them
            widget.setSingleStep(0.01 if (bound.maximum or 1) <= 10 else 1.0)
        widget.setRange(float(bound.minimum), float(bound.maximum))
        widget.valueChanged.connect(on_changed)
    else:  # data_dir
        widget = QLineEdit()
        widget.setPlaceholderText(QCoreApplication.translate("form_widgets", "default: the user data folder"))
        widget.textChanged.connect(on_data_dir_typed)  # checked, but not counted, per keystroke
        widget.editingFinished.connect(on_changed)
    if isinstance(widget, (QSpinBox, QDoubleSpinBox)):
        widget.setKeyboardTracking(False)
    widget.setToolTip(field_tooltip(field))
    widget.setObjectName(field)
    return widget


def widget_value(widget: QWidget) -> Any:
    """The value a widget holds, by its kind (a combo box: the chosen item's data, the identifier)."""
    if isinstance(widget, QComboBox):
        return widget.currentData()
    if isinstance(widget, QCheckBox):
        return widget.isChecked()
    if isinstance(widget, OptionalSpinBox):
        return widget.optional_value()
    if isinstance(widget, (QSpinBox, QDoubleSpinBox)):
        return widget.value()
    text = widget.text().strip()
    return text or None


def set_widget_value(widget: QWidget, value: Any) -> None:
    """Show `value` in a widget, by its kind (a combo box: the item whose data it is, else the first)."""
    if isinstance(widget, QComboBox):
        widget.setCurrentIndex(max(widget.findData(value), 0))
    elif isinstance(widget, QCheckBox):
        widget.setChecked(bool(value))
    elif isinstance(widget, OptionalSpinBox):
        widget.set_optional_value(value)
    elif isinstance(widget, (QSpinBox, QDoubleSpinBox)):
        widget.setValue(value)
    else:
        widget.setText(value or "")
