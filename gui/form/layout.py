"""Where the settings form's fields go: the titled box each field is in (`GROUPS`, in the order shown), a field
with a button at its right (Refresh by the device, Browse… by the data folder), and combo boxes that fit the
column. Apart from `gpu_train_monitor.gui.form.settings_form` because that reads, checks and writes the values; this
only places them.
"""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QToolButton, QWidget

COMBO_MIN_CHARACTERS = 8  # a combo box asks for this much width, not its longest item's (a device's full name)

GROUPS: dict[str, tuple[str, ...]] = {  # title (translated where it is shown): fields
    QT_TRANSLATE_NOOP("SettingsForm", "Device and model"): (
        "device",
        "nproc",
        "sync_bn",
        "model",
        "layers",
        "width",
        "heads",
        "attention",
        "activation_checkpointing",
        "expandable_segments",
    ),
    QT_TRANSLATE_NOOP("SettingsForm", "Speed"): (
        "amp",
        "channels_last",
        "compile",
        "cudnn_benchmark",
        "fused_optimizer",
    ),
    QT_TRANSLATE_NOOP("SettingsForm", "Data"): (
        "dataset",
        "data_dir",
        "download",
        "synthetic_samples",
        "placement",
        "workers",
        "pin_memory",
        "non_blocking",
    ),
    QT_TRANSLATE_NOOP("SettingsForm", "Training"): (
        "batch_size",
        "seq_len",
        "epochs",
        "max_steps",
        "lr",
        "optimizer",
        "momentum",
        "weight_decay",
        "seed",
        "on_oom",
        "report_interval",
    ),
}


def fit_combos_to_column(form: QWidget) -> None:
    """Combo boxes take the column's width instead of widening the form to their longest item, which pushed
    the form under its scroll area's scroll bar (the Preset arrow hidden, labels cut once Tab scrolled)."""
    for combo in form.findChildren(QComboBox):
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(COMBO_MIN_CHARACTERS)


def with_button(widget: QWidget, text: str, tooltip: str) -> tuple[QWidget, QToolButton]:
    """A row of `widget` (stretched) and a tool button saying `text` (both translated): (the row, the button)."""
    row = QWidget()
    h = QHBoxLayout(row)
    h.setContentsMargins(0, 0, 0, 0)
    h.addWidget(widget, 1)
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tooltip)
    h.addWidget(button)
    return row, button
