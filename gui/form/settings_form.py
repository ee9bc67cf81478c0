"""The run settings form, built from `gpu_train_monitor.config.bounds.BOUNDS` so the form and the config cannot
disagree.

Every widget's range, choices, default and tooltip come from the bounds table
(`gpu_train_monitor.gui.form.field_widgets` builds one per field, reads and writes it). The form turns its values into a
`RunConfig`; anything the config rejects, and what only this machine can tell
(`gpu_train_monitor.gui.form.checks`: a missing data folder, a device that is not here, a batch larger than the training
set, an unknown model, your own model or dataset whose module or file is not there, a fast path the
device cannot run, more processes than this machine has GPUs or CPU cores), shows as an inline message and
`validity_changed(False, message)` disables Start. A preset (`gpu_train_monitor.gui.form.preset_row`) writes its
settings in. Which box each field is in is `gpu_train_monitor.gui.form.layout`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, Signal, Slot
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QLabel, QVBoxLayout, QWidget

from gpu_train_monitor.base.errors import ConfigError, UserError
from gpu_train_monitor.config.bounds import BOUNDS
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.gui.form.applicability import (
    applicability,
    auto_model_text,
    is_auto_model,
    shown_enabled,
    shown_tooltip,
)
from gpu_train_monitor.gui.form.beyond_config import check_beyond_config
from gpu_train_monitor.gui.form.checks import (
    FolderCounts,
    NprocMeaning,
    check_data_folder,
    check_device,
    checkpointing_problem,
    nproc_meaning,
)
from gpu_train_monitor.gui.form.device_fields import device_index, refill_device_combo, show_nproc_meaning
from gpu_train_monitor.gui.form.device_table import DeviceTable, remote_table
from gpu_train_monitor.gui.form.field_widgets import (
    make_field_widget,
    set_widget_value,
    show_applies,
    show_auto_model,
    show_choice_applies,
    widget_value,
)
from gpu_train_monitor.gui.form.layout import GROUPS, fit_combos_to_column, with_button
from gpu_train_monitor.gui.form.peak_prediction import add_peak_row
from gpu_train_monitor.gui.form.preset_row import PresetRow, overrides_for
from gpu_train_monitor.gui.form.text import field_help, friendly, label
from gpu_train_monitor.gui.qt import file_dialogs
from gpu_train_monitor.gui.qt.core_text import error_text
from gpu_train_monitor.gui.qt.widgets import wheel_only_when_focused
from gpu_train_monitor.gui.remote.devices import RemoteDevice, split_key


class SettingsForm(QWidget):
    """All RunConfig knobs as widgets; emits `validity_changed(valid, message)` whenever a value changes."""

    validity_changed = Signal(bool, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.widgets: dict[str, QWidget] = {}
        self.labels: dict[str, QLabel] = {}
        self.local_devices = DeviceTable()  # filled once torch has listed this machine's devices
        # those of the machine connected to (gpu_train_monitor.gui.remote)
        self.remote_devices: tuple[RemoteDevice, ...] = ()
        self._remote_table = DeviceTable()
        self._known_models: set[str] | None = None
        self._folder_counts = FolderCounts()
        self._valid, self._message = True, ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.preset_row = PresetRow()
        self.preset_row.chosen.connect(self._on_preset_chosen)
        layout.addWidget(self.preset_row)
        for title, fields in GROUPS.items():
            box = QGroupBox(QCoreApplication.translate("SettingsForm", title))
            form = QFormLayout(box)
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            for field in fields:
                widget = make_field_widget(field, self._on_changed, self._on_data_dir_typed)
                self.widgets[field] = widget
                field_label = QLabel(label(field))
                field_label.setToolTip(field_help(field))
                self.labels[field] = field_label
                form.addRow(field_label, self._with_extras(field, widget))
                if field == "seq_len":  # below batch size and sequence length: their peak (PeakPrediction)
                    self.peak_label = add_peak_row(form)
            layout.addWidget(box)
        self.message_label = QLabel()
        self.message_label.setObjectName("formMessage")
        self.message_label.setWordWrap(True)
        self.message_label.hide()
        layout.addWidget(self.message_label)
        layout.addStretch(1)
        fit_combos_to_column(self)
        wheel_only_when_focused(self)  # the wheel scrolls the form; it changes a field only once focused
        self.set_config(RunConfig())

    # ---- construction ----------------------------------------------------------------------------
    def _with_extras(self, field: str, widget: QWidget) -> QWidget:
        if field == "device":
            row, self.refresh_devices_button = with_button(
                widget, self.tr("Refresh"), self.tr("Look for devices again")
            )
        elif field == "data_dir":
            row, button = with_button(widget, self.tr("Browse…"), self.tr("Choose the folder that holds the dataset"))
            button.clicked.connect(self._on_browse_data_dir)
        else:
            return widget
        return row

    # ---- values ----------------------------------------------------------------------------------
    @property
    def devices(self) -> DeviceTable:
        """The devices of the machine the selected device is on: this one's, or the remote machine's."""
        return self._remote_table if self.remote_host() is not None else self.local_devices

    def remote_host(self) -> str | None:
        """The machine the selected device is on when it is a remote one (as the user typed it), else None."""
        return split_key(self.widgets["device"].currentData())[1]

    def value(self, field: str) -> Any:
        widget = self.widgets[field]
        if field == "device":  # a remote device's entry keeps its host too: the config has the spec
            return split_key(widget.currentData())[0]
        if field == "model":
            text = widget.currentText().strip()
            return "auto" if is_auto_model(text) else text
        if field == "dataset":  # a listed item's text is said in the user's language: its data is the name
            text = widget.currentText().strip()
            index = widget.findText(text)
            return widget.itemData(index) if index >= 0 and widget.itemData(index) else text
        return widget_value(widget)

    def values(self) -> dict[str, Any]:
        return {field: self.value(field) for field in BOUNDS}

    def config(self, scan: bool = True) -> RunConfig:
        """The RunConfig the form shows; raises UserError when a value is not acceptable.

        `scan`: count an image folder's images when that folder has not been counted yet."""
        config = RunConfig(**self.values())
        check_beyond_config(self, config, scan)
        return config

    def device_problem(self) -> str | None:
        """Why the selected device cannot run here (the status bar says it too), or None."""
        if self.devices.specs is None:
            return None
        try:
            check_device(str(self.value("device")), self.devices.specs)
        except ConfigError as exc:
            return error_text(exc, with_field=False)
        return None

    def set_config(self, config: RunConfig) -> None:
        for field, value in config.to_dict().items():
            widget = self.widgets[field]
            widget.blockSignals(True)
            if field == "model":
                widget.setEditText(self._auto_model_text() if value == "auto" else value)
            elif field == "dataset":
                index = widget.findData(value)
                widget.setCurrentIndex(index)  # -1 for your own: its text is set next
                widget.setEditText(widget.itemText(index) if index >= 0 else value)
            elif field == "device":
                widget.setCurrentIndex(self._device_index(value))
            else:
                set_widget_value(widget, value)
            widget.blockSignals(False)
        self._on_changed()

    def _device_index(self, spec: str) -> int:
        return device_index(self.widgets["device"], spec, self.local_devices.known, self.remote_host())

    def set_batch_size(self, batch_size: int) -> None:
        """Set the batch size (from the finder or an out-of-memory retry), validating as a user edit does."""
        self.widgets["batch_size"].setValue(batch_size)

    # ---- environment -----------------------------------------------------------------------------
    def set_devices(self, devices: list[Any]) -> None:
        """Fill the device combo from `gpu_train_monitor.device.devices.list_devices()`, keeping the current choice."""
        self.listed_devices = list(devices)  # listed again in another language after a language change
        self.local_devices = DeviceTable.from_devices(devices)
        self._refill_devices()

    def set_remote_devices(self, devices: tuple[RemoteDevice, ...]) -> None:
        """List the connected machine's devices after this one's, named with its host (none: disconnected; a
        remote device that was selected then goes back to auto)."""
        self.remote_devices = tuple(devices)
        self._remote_table = remote_table(self.remote_devices)
        self._refill_devices()

    def _refill_devices(self) -> None:
        combo: QComboBox = self.widgets["device"]
        combo.blockSignals(True)
        refill_device_combo(combo, getattr(self, "listed_devices", []), self.local_devices, self.remote_devices)
        combo.blockSignals(False)
        self._on_changed()

    def set_models(self, names: list[str]) -> None:
        combo: QComboBox = self.widgets["model"]
        current = combo.currentText()
        combo.blockSignals(True)
        combo.clear()
        for name in names:
            combo.addItem(name, name)  # auto found by its data whatever language its text is in
        combo.setEditText(self._auto_model_text() if is_auto_model(current) else current)
        combo.blockSignals(False)
        self._known_models = set(names)
        self._on_changed()

    def resolved_spec(self, spec: str | None = None) -> str:
        """The listed device `spec` (default: the selected one) names here: auto -> the best one found."""
        return self.devices.resolved(str(self.value("device") if spec is None else spec))

    def train_images(self, config: RunConfig) -> int | None:
        """Training images `config` will have, where known without reading files now (an image folder
        counts once its path is settled)."""
        if not self.local_devices.known:
            return None
        from gpu_train_monitor.data.datasets import train_size_hint

        train = train_size_hint(config)
        if train is None and config.dataset == "imagefolder" and config.data_dir and not config.download:
            try:
                train = self._folder_counts.lookup(config.data_dir, check_data_folder(config.data_dir), False)
            except ConfigError:
                return None
        return train

    def nproc_meaning(self) -> NprocMeaning:
        """What "nproc" counts on the selected device of this machine: its GPUs, or CPU processes."""
        known = self.devices.specs is not None
        gpus = sum(kind == "cuda" for spec, kind in self.devices.kinds.items() if spec != "auto") if known else None
        return nproc_meaning(self.device_kind(), gpus)

    def device_kind(self) -> str:
        """'cpu', 'cuda' or 'mps' for the selected device (auto resolves to the best one found)."""
        return self.devices.kind(str(self.value("device")))

    def set_editable(self, editable: bool) -> None:
        """Lock the form during a run (the run's config is fixed once started)."""
        for box in self.findChildren(QGroupBox):
            box.setEnabled(editable)
        self.preset_row.setEnabled(editable)
        if editable:
            self.update_applicability()

    # ---- validation and applicability -------------------------------------------------------------
    @property
    def valid(self) -> bool:
        return self._valid

    @property
    def message(self) -> str:
        return self._message

    @Slot()
    def _on_changed(self, *_: object) -> None:
        self._validate(scan=True)

    @Slot(str)
    def _on_data_dir_typed(self, _text: str) -> None:
        self._validate(scan=False)  # a half-typed path may name a huge folder: count it once editing ends

    def _validate(self, scan: bool) -> None:
        self.update_applicability()
        try:
            self.config(scan)
            valid, message = True, ""
        except UserError as exc:
            valid, message = False, friendly(exc)
        except Exception as exc:  # a check that fails unexpectedly must not raise out of a slot (nor pass)
            valid, message = (
                False,
                self.tr("the settings could not be checked: {error}").format(error=f"{type(exc).__name__}: {exc}"),
            )
        self.preset_row.sync(self.values(), self.device_kind())
        self.message_label.setText(message)
        self.message_label.setVisible(not valid)
        if (valid, message) != (self._valid, self._message):
            self._valid, self._message = valid, message
        self.validity_changed.emit(valid, message)

    def update_applicability(self) -> None:
        """Grey out what does not apply with the device and the other values, why as the tooltip
        (`gpu_train_monitor.gui.form.applicability` decides), label the process count and say what auto stands for."""
        values = self.values()
        problems = dict(self.devices.problems_of(str(values["device"])))
        if self.local_devices.known:  # the model's blocks: gpu_train_monitor.model imports torch
            problem = checkpointing_problem(str(values["model"]), self.device_kind())
            if problem is not None:
                problems["activation_checkpointing"] = problem
        reasons = applicability(values, self.device_kind(), problems)
        for key, reason in reasons.items():
            field, _, choice = key.partition("=")
            enabled, tooltip = shown_enabled(key, reason, values), shown_tooltip(key, reason)
            if choice:
                show_choice_applies(self.widgets[field], choice, enabled, tooltip)
            else:
                row = self.widgets[field].parentWidget() if field == "data_dir" else None  # with Browse…
                show_applies(self.widgets[field], enabled, tooltip, row)
        amp: QComboBox = self.widgets["amp"]
        if reasons["amp=fp16"] is not None and amp.currentData() == "fp16":
            amp.setCurrentIndex(amp.findData("off"))
        show_nproc_meaning(self.widgets["nproc"], self.labels["nproc"], self.nproc_meaning())
        show_auto_model(self.widgets["model"], self._auto_model_text())

    def _auto_model_text(self) -> str:
        known = self.devices.known and self.local_devices.known
        return auto_model_text(self.device_kind() if known else None, self.remote_host(), str(self.value("dataset")))

    @Slot(str)
    def _on_preset_chosen(self, name: str) -> None:
        """Write the preset's settings into the form (or, for none, the defaults of the last preset's)."""
        changes = overrides_for(name, self.preset_row.matched, self.device_kind())
        if not changes:
            return
        try:
            config = RunConfig(**{**self.values(), **changes})
        except UserError as exc:  # another value cannot be used (a model typed half-way): say which
            self.message_label.setText(self.tr("the preset was not applied: {reason}").format(reason=friendly(exc)))
            self.message_label.show()
            self.preset_row.sync(self.values(), self.device_kind())
            return
        self.set_config(config)

    @Slot()
    def _on_browse_data_dir(self) -> None:
        start = self.value("data_dir") or str(Path.home())
        folder = file_dialogs.get_existing_directory(self, self.tr("Dataset folder"), start)
        if folder:
            self.widgets["data_dir"].setText(folder)
