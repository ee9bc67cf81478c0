"""One widget per `gpu_train_monitor.config.bounds.BOUNDS` field, and its value read and written by the widget's
kind.

The widget follows the bound: a combo box for choices, a check box for a flag, a spin box over the range
(a lowest position meaning "not set" for an optional number, steps by factors for a log-scale float), a
line edit for the data folder. The settings form places them, and reads and writes the fields whose
widgets need more than their kind says (the model, the dataset, the device). It also shows on them whether a
setting applies (`show_applies`, `show_choice_applies`) and what auto stands for (`show_auto_model`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QTimer
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox, QWidget

from gpu_train_monitor.base.user_code import SPEC_FORM
from gpu_train_monitor.config.bounds import BOUNDS, BUILTIN_MODELS
from gpu_train_monitor.gui.form.applicability import is_auto_model
from gpu_train_monitor.gui.form.text import field_tooltip, none_text
from gpu_train_monitor.gui.qt.core_text import choice_text
from gpu_train_monitor.gui.qt.widgets import OptionalSpinBox, ScientificSpinBox


def make_field_widget(field: str, on_changed: Callable[..., None], on_data_dir_typed: Callable[[str], None]) -> QWidget:
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
        for choice in BUILTIN_MODELS if field == "model" else bound.choices or ():
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
        widget.setKeyboardTracking(False)  # not a change per keystroke ("5" of "512"): one after a pause, or Enter
        commit_after_pause(widget)
    widget.setToolTip(field_tooltip(field))
    widget.setObjectName(field)
    return widget


TYPING_PAUSE_MS = 500  # a number typed into a spin box counts once the typing has paused this long


def commit_after_pause(spin: QSpinBox | QDoubleSpinBox) -> None:
    """What is typed into `spin` becomes its value once the typing pauses (as Enter or leaving the field would make
    it), when it is a value the box takes: the predicted peak and the checks follow the typing, not only Enter."""
    editor = spin.findChild(QLineEdit)
    if editor is None:
        return
    timer = QTimer(spin)
    timer.setSingleShot(True)
    timer.setInterval(TYPING_PAUSE_MS)
    timer.timeout.connect(lambda: spin.interpretText() if spin.hasAcceptableInput() else None)
    editor.textEdited.connect(lambda _text: timer.start())


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


KEPT_TICK = "tickKeptWhileNotUsed"  # a tick box's property: it was ticked when its setting stopped applying


def show_applies(widget: QWidget, enabled: bool, tooltip: str, target: QWidget | None = None) -> None:
    """Enable `target` (default: `widget`, the data folder's whole row with Browse…) or grey it out, with
    `tooltip` saying why. A tick box that does not apply shows unticked and gets its tick back later."""
    (target or widget).setEnabled(enabled)
    if isinstance(widget, QCheckBox):
        _keep_tick(widget, enabled)
    widget.setToolTip(tooltip)


def show_choice_applies(combo: QComboBox, choice: str, enabled: bool, tooltip: str) -> None:
    """Enable the item of `combo` whose data is `choice` or grey it out, with `tooltip` saying why."""
    model = combo.model()
    if isinstance(model, QStandardItemModel):
        item = model.item(combo.findData(choice))
        item.setEnabled(enabled)
        item.setToolTip(tooltip)


def _keep_tick(box: QCheckBox, applies: bool) -> None:
    """A tick on a setting that does not apply is not in effect: show it off (the config reads it off) and
    give it back once the setting applies again."""
    if not (bool(box.property(KEPT_TICK)) if applies else box.isChecked()):
        return  # nothing kept to give back, or nothing ticked to take off
    box.blockSignals(True)  # the form is validating already: no second round from the toggle
    box.setChecked(applies)
    box.blockSignals(False)
    box.setProperty(KEPT_TICK, not applies)


def show_auto_model(combo: QComboBox, text: str) -> None:
    """Keep the model combo's auto entry (and the text, when it shows auto) saying what auto stands for:
    `text` (`gpu_train_monitor.gui.form.applicability.auto_model_text`)."""
    index = combo.findData("auto")  # by its data: its text may be another language's (a language change)
    if index < 0:
        index = next((i for i in range(combo.count()) if is_auto_model(combo.itemText(i))), -1)
    current = combo.currentText()
    shows_auto = is_auto_model(current) or (index >= 0 and current == combo.itemText(index))
    # auto shown by the program, or typed and left: say what it stands for; mid-typing, leave the text alone
    show = shows_auto and current != text and not combo.lineEdit().hasFocus()
    if (index < 0 or combo.itemText(index) == text) and not show:
        return
    combo.blockSignals(True)
    if index >= 0:
        combo.setItemText(index, text)
    combo.setEditText(text if show else current)  # renaming the current item must not change what was typed
    if show:
        combo.lineEdit().setCursorPosition(0)  # a text longer than the box shows its start: "auto (resnet18 on…"
    combo.blockSignals(False)
