"""The settings form: built from BOUNDS (it cannot disagree with the config), validation, applicability."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox

from core.config import BOUNDS, BUILTIN_MODELS, RunConfig, describe_range
from core.devices import DeviceInfo
from gui.settings_form import SettingsForm
from gui.widgets import OptionalSpinBox, ScientificSpinBox

FAKE_GPU = DeviceInfo("cuda:0", "cuda", "Test GPU", 8_000_000_000)
CPU = DeviceInfo("cpu", "cpu", "Test CPU", 16_000_000_000)


@pytest.fixture
def form(qtbot) -> SettingsForm:
    form = SettingsForm()
    qtbot.addWidget(form)
    return form


def combo_data(combo: QComboBox) -> list:
    return [combo.itemData(i) for i in range(combo.count())]


@pytest.mark.parametrize("field", list(BOUNDS))
def test_every_widget_takes_its_range_choices_and_default_from_bounds(form, field):
    bound = BOUNDS[field]
    widget = form.widgets[field]
    assert form.value(field) == RunConfig().to_dict()[field] == bound.default
    if field == "device":
        assert isinstance(widget, QComboBox) and "auto" in combo_data(widget)
    elif field == "model":
        assert isinstance(widget, QComboBox) and widget.isEditable()
        assert [widget.itemText(i) for i in range(widget.count())] == list(BUILTIN_MODELS)
    elif bound.choices:
        assert isinstance(widget, QComboBox)
        assert tuple(combo_data(widget)) == bound.choices
    elif bound.kind is bool:
        assert isinstance(widget, QCheckBox)
    elif bound.kind is int and bound.optional:
        assert isinstance(widget, OptionalSpinBox)
        assert widget.minimum() == bound.minimum - 1  # the position below the range means "no limit"
        assert widget.maximum() == bound.maximum
        widget.setValue(widget.minimum())
        assert form.value(field) is None and widget.text() == "no limit"
        widget.setValue(int(bound.minimum))
        assert form.value(field) == bound.minimum
    elif bound.kind is int:
        assert type(widget) is QSpinBox
        assert (widget.minimum(), widget.maximum()) == (bound.minimum, bound.maximum)
    elif bound.kind is float:
        assert isinstance(widget, QDoubleSpinBox)
        assert isinstance(widget, ScientificSpinBox) == bound.log_scale
        assert (widget.minimum(), widget.maximum()) == (bound.minimum, bound.maximum)
        widget.setValue(bound.maximum)
        assert form.value(field) == bound.maximum
        widget.setValue(bound.minimum)
        assert form.value(field) == bound.minimum
    else:
        assert isinstance(widget, QLineEdit)
    if field not in ("pin_memory", "non_blocking", "data_dir", "download", "momentum"):  # these may say "Not used"
        assert widget.toolTip() == f"{bound.help} ({describe_range(field)})"


def test_numeric_widgets_stop_at_the_bounds_a_user_types_past(qtbot, form):
    batch = form.widgets["batch_size"]
    batch.lineEdit().selectAll()
    qtbot.keyClicks(batch.lineEdit(), "999999")
    qtbot.keyClick(batch.lineEdit(), Qt.Key.Key_Enter)
    assert form.value("batch_size") <= BOUNDS["batch_size"].maximum
    assert form.valid


def test_spin_boxes_that_change_a_run_do_not_track_every_keystroke(form):
    for field, widget in form.widgets.items():
        if isinstance(widget, (QSpinBox, QDoubleSpinBox)):
            assert not widget.keyboardTracking(), field


def test_learning_rate_3e_4_survives_set_config_and_config(form):
    form.set_config(RunConfig(lr=3e-4))
    assert form.config().lr == 3e-4
    assert form.widgets["lr"].text() == "0.0003"  # not "0.00" (QDoubleSpinBox's 2 decimals)
    form.set_config(RunConfig(lr=1e-8))
    assert form.config().lr == 1e-8


def test_learning_rate_typed_as_3e_4(qtbot, form):
    lr = form.widgets["lr"]
    lr.lineEdit().selectAll()
    qtbot.keyClicks(lr.lineEdit(), "3e-4")
    qtbot.keyClick(lr.lineEdit(), Qt.Key.Key_Enter)
    assert lr.value() == 3e-4
    assert form.config().lr == 3e-4


@pytest.mark.parametrize("value", [5e-4, 1e-4, 5e-5, 0.0])
def test_weight_decay_values_survive_the_form(form, value):
    form.set_config(RunConfig(weight_decay=value))
    assert form.config().weight_decay == value


def test_every_config_round_trips_through_the_form(form, tmp_path):
    config = RunConfig(device="cpu", model="tiny-cnn", dataset="cifar10", data_dir=str(tmp_path), download=True,
                       synthetic_samples=300, batch_size=7, epochs=3, max_steps=99, lr=0.0125, optimizer="adamw",
                       momentum=0.5, weight_decay=0.01, amp="bf16", channels_last=True, placement="stream",
                       workers=3, pin_memory=False, non_blocking=False, seed=12345, report_interval=0.25,
                       on_oom="shrink")
    form.set_config(config)
    assert form.config() == config


def test_unknown_model_typed_shows_a_message_and_invalidates(qtbot, form):
    form.set_models(["tiny-cnn", "resnet18", "mobilenet_v3_small"])
    with qtbot.waitSignal(form.validity_changed) as changed:
        form.widgets["model"].setEditText("resnet9000")
    assert changed.args[0] is False and "unknown model 'resnet9000'" in changed.args[1]
    assert not form.valid
    assert not form.message_label.isHidden()
    assert form.message_label.text().startswith("Model: ")
    form.widgets["model"].setEditText("mobilenet_v3_small")
    assert form.valid and form.message_label.isHidden()


def test_missing_data_folder_shows_a_message_until_download_is_ticked(form, tmp_path):
    form.set_config(RunConfig(dataset="mnist", data_dir=str(tmp_path / "nowhere")))
    assert not form.valid
    assert "Data folder: the folder" in form.message and "does not exist" in form.message
    assert not form.message_label.isHidden()
    form.widgets["download"].setChecked(True)  # downloading creates the folder
    assert form.valid and form.message_label.isHidden()


def test_empty_model_name_is_invalid(form):
    form.widgets["model"].setEditText("   ")
    assert not form.valid
    assert form.message.startswith("Model: ")


def test_pin_memory_and_non_blocking_are_disabled_on_the_cpu_with_a_reason(form):
    form.set_devices([CPU, FAKE_GPU])
    form.set_config(RunConfig(device="cpu", placement="stream"))
    for field in ("pin_memory", "non_blocking"):
        assert not form.widgets[field].isEnabled()
        assert form.widgets[field].toolTip().startswith("Not used: ")
    assert "pin_memory only speeds up copies to a GPU" in form.widgets["pin_memory"].toolTip()

    form.widgets["device"].setCurrentIndex(form.widgets["device"].findData("cuda:0"))
    assert form.device_kind() == "cuda"
    for field in ("pin_memory", "non_blocking"):
        assert form.widgets[field].isEnabled()
        assert not form.widgets[field].toolTip().startswith("Not used")


def test_fp16_is_disabled_on_the_cpu_with_a_reason(form):
    form.set_devices([CPU, FAKE_GPU])
    form.set_config(RunConfig(device="cuda:0", amp="fp16"))
    amp: QComboBox = form.widgets["amp"]
    item = amp.model().item(amp.findData("fp16"))
    assert item.isEnabled() and form.value("amp") == "fp16"

    form.widgets["device"].setCurrentIndex(form.widgets["device"].findData("cpu"))
    assert not item.isEnabled()
    assert "fp16 autocast needs a CUDA or MPS device" in item.toolTip()
    assert form.value("amp") == "off"  # a choice that cannot run is not kept
    assert amp.model().item(amp.findData("bf16")).isEnabled()  # bf16 autocast runs on the CPU


def test_workers_are_disabled_with_the_resident_placement(form):
    form.set_config(RunConfig(placement="resident"))
    workers = form.widgets["workers"]
    assert not workers.isEnabled()
    assert "resident placement keeps the data on the device" in workers.toolTip()
    form.widgets["placement"].setCurrentIndex(form.widgets["placement"].findData("stream"))
    assert workers.isEnabled()
    assert workers.toolTip().startswith(BOUNDS["workers"].help)


def test_dataset_specific_options_follow_the_dataset(form):
    form.set_config(RunConfig(dataset="synthetic"))
    assert form.widgets["synthetic_samples"].isEnabled()
    assert not form.widgets["data_dir"].parentWidget().isEnabled()  # the folder row, with Browse…
    assert "needs no files" in form.widgets["data_dir"].toolTip()
    form.widgets["dataset"].setCurrentIndex(form.widgets["dataset"].findData("imagefolder"))
    assert not form.widgets["synthetic_samples"].isEnabled()
    assert form.widgets["data_dir"].parentWidget().isEnabled()
    assert not form.widgets["download"].isEnabled()  # an image folder cannot be downloaded


def test_momentum_is_disabled_for_adamw(form):
    form.set_config(RunConfig(optimizer="adamw"))
    assert not form.widgets["momentum"].isEnabled()
    assert "AdamW has no momentum" in form.widgets["momentum"].toolTip()


def test_device_list_shows_names_and_capacity_and_keeps_the_choice(form):
    form.set_devices([CPU, FAKE_GPU])
    combo = form.widgets["device"]
    assert combo_data(combo) == ["auto", "cpu", "cuda:0"]
    assert combo.itemText(0) == "auto (cuda:0)"
    assert combo.itemText(2) == "cuda:0: Test GPU (8.00 GB)"
    combo.setCurrentIndex(2)
    form.set_devices([CPU, FAKE_GPU])  # Refresh keeps the selected device
    assert form.value("device") == "cuda:0"
    form.set_devices([CPU])  # the GPU went away: fall back to auto
    assert form.value("device") == "auto" and form.device_kind() == "cpu"


def test_a_saved_device_not_present_is_kept_and_named(form):
    form.set_config(RunConfig(device="cuda:3"))
    combo = form.widgets["device"]
    assert form.value("device") == "cuda:3"
    assert combo.currentText() == "cuda:3 (not found yet)"


def test_locking_the_form_during_a_run(form):
    form.set_editable(False)
    assert not form.widgets["batch_size"].isEnabled()
    form.set_editable(True)
    assert form.widgets["batch_size"].isEnabled()
