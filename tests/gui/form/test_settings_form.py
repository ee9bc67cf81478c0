"""The settings form: built from BOUNDS (it cannot disagree with the config), validation, applicability."""

from __future__ import annotations

import os
import re
import sys

import pytest
from PySide6.QtCore import QLocale, Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QGroupBox, QLineEdit, QSpinBox

from gpu_train_monitor.config.bounds import BOUNDS, BUILTIN_MODELS
from gpu_train_monitor.config.field_checks import describe_range
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.device.devices import DeviceInfo
from gpu_train_monitor.gui.form.settings_form import SettingsForm
from gpu_train_monitor.gui.form.text import HELP, LABELS, NONE_TEXT, field_help, field_tooltip
from gpu_train_monitor.gui.qt.widgets import OptionalSpinBox, ScientificSpinBox
from tests.support.translator_support import translated

FAKE_GPU = DeviceInfo("cuda:0", "cuda", "Test GPU", 8_000_000_000)
CPU = DeviceInfo("cpu", "cpu", "Test CPU", 16_000_000_000)
OFF_ON_CPU = {"pin_memory": False, "non_blocking": False}  # greyed out on the CPU: not in effect


@pytest.fixture
def form(qtbot) -> SettingsForm:
    form = SettingsForm()
    qtbot.addWidget(form)
    return form


def combo_data(combo: QComboBox) -> list:
    return [combo.itemData(i) for i in range(combo.count())]


@pytest.fixture
def locale():
    """Sets the locale numbers are written in (as the language choice does) for the test, then restores it."""
    before = QLocale()
    yield QLocale.setDefault
    QLocale.setDefault(before)


@pytest.fixture
def plain_numbers(locale):
    """Numbers without digit grouping, as gpu_train_monitor.config.field_checks.describe_range writes them (65536)."""
    locale(QLocale.c())


def form_words(cli_help: str) -> str:
    """A bound's help with its CLI options ('--max-steps') named by their form labels ('"Max steps"')."""

    def label(match: re.Match[str]) -> str:
        name = match.group(1).replace("-", "_")
        return f'"{LABELS[name]}"' if name in BOUNDS else match.group(0)

    return re.sub(r"--([a-z][a-z-]*)", label, cli_help)


def test_every_field_has_a_label_and_its_bounds_help_in_the_forms_words():
    assert set(LABELS) == set(HELP) == set(BOUNDS)
    for field, bound in BOUNDS.items():
        assert field_help(field) == form_words(bound.help), field  # the form's text follows core's


@pytest.mark.parametrize("field", list(BOUNDS))
def test_every_widget_takes_its_range_choices_and_default_from_bounds(plain_numbers, form, field):
    bound = BOUNDS[field]
    widget = form.widgets[field]
    assert RunConfig().to_dict()[field] == bound.default
    # a tick box greyed out (pin_memory before a GPU is known) shows off: it is not in effect
    assert form.value(field) == (bound.default and widget.isEnabled() if bound.kind is bool else bound.default)
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
        assert form.value(field) is None and widget.text() == NONE_TEXT[field]
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
    if field not in (
        "pin_memory",
        "non_blocking",
        "data_dir",
        "download",
        "momentum",
        "sync_bn",
        "expandable_segments",
        "seq_len",
        "layers",
        "width",
        "heads",
        "attention",
    ):  # these may say "Not used" (by default the model is an image model, the dataset images)
        allowed = describe_range(field) + (f", or {NONE_TEXT[field]}" if bound.optional and bound.kind is int else "")
        assert widget.toolTip() == f"{field_help(field)} ({allowed})"


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
    config = RunConfig(
        device="cpu",
        model="tiny-cnn",
        dataset="cifar10",
        data_dir=str(tmp_path),
        download=True,
        synthetic_samples=300,
        batch_size=7,
        epochs=3,
        max_steps=99,
        lr=0.0125,
        optimizer="adamw",
        momentum=0.5,
        weight_decay=0.01,
        amp="bf16",
        channels_last=True,
        placement="stream",
        workers=3,
        pin_memory=False,
        non_blocking=False,
        seed=12345,
        report_interval=0.25,
        on_oom="shrink",
    )
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


def test_expandable_segments_are_greyed_out_off_cuda_with_a_reason(form):
    form.set_devices([CPU, FAKE_GPU])
    form.set_config(RunConfig(device="cpu"))
    combo = form.widgets["expandable_segments"]
    assert not combo.isEnabled()
    assert combo.toolTip() == "Not used: only CUDA's caching allocator has segments to expand"
    form.widgets["device"].setCurrentIndex(form.widgets["device"].findData("cuda:0"))
    assert combo.isEnabled() and combo.toolTip().startswith(BOUNDS["expandable_segments"].help)
    combo.setCurrentIndex(combo.findData("on"))
    assert form.config().expandable_segments == "on"


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
    form.set_devices([CPU])  # the GPU went away: the choice stays, flagged, until another is picked
    assert form.value("device") == "cuda:0" and combo.currentText() == "cuda:0 (not on this machine)"
    assert not form.valid and "Device: cuda:0 is not on this machine; it has cpu" in form.message
    combo.setCurrentIndex(combo.findData("auto"))
    assert form.valid and form.device_kind() == "cpu"


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


# --- what only this machine can tell: the form says it before Start --------------------------------------


def test_epochs_and_max_steps_are_optional_and_their_tooltips_say_how_they_bound_the_run(form):
    epochs, max_steps = form.widgets["epochs"], form.widgets["max_steps"]
    assert form.value("epochs") is None and epochs.text() == "auto"  # 1, or as many as max steps needs
    assert 'as many as "Max steps" needs' in epochs.toolTip()
    assert "over as many epochs as that takes" in max_steps.toolTip()
    assert "--" not in epochs.toolTip() + max_steps.toolTip()  # the form's names, not the CLI's options
    form.set_config(RunConfig(max_steps=500))
    assert form.config().epochs is None and form.config().epoch_limit is None
    form.set_config(RunConfig(epochs=3))
    assert form.config().epochs == 3 and epochs.text() == "3"


@pytest.mark.parametrize(
    ("config", "train_images"),
    [
        (RunConfig(dataset="synthetic", synthetic_samples=512), 512),
        (RunConfig(dataset="cifar10", download=True), 50_000),
        (RunConfig(dataset="mnist", download=True), 60_000),
        (RunConfig(dataset="fashion-mnist", download=True), 60_000),
    ],
)
def test_a_batch_larger_than_a_known_training_set_is_refused_inline(form, config, train_images):
    form.set_devices([CPU])  # torch has loaded: the dataset sizes are known
    form.set_config(config.replace(batch_size=train_images))
    assert form.valid  # the whole set in one batch is allowed
    form.set_batch_size(train_images + 1)
    assert not form.valid and not form.message_label.isHidden()
    assert form.message == (
        f"Batch size: {train_images + 1} is larger than the training set "
        f"({train_images:,} images); use at most {train_images}"
    )


def test_batch_size_is_not_checked_against_the_dataset_before_torch_has_loaded(form):
    # gpu_train_monitor.data.datasets would import torch
    form.set_config(RunConfig(synthetic_samples=256, batch_size=1024))
    assert form.valid
    form.set_devices([CPU])
    assert not form.valid and "larger than the training set (256 images)" in form.message


class CountingScan:
    """Stands in for gpu_train_monitor.data.datasets.imagefolder.count_train_images and counts the scans."""

    def __init__(self, result: int | Exception) -> None:
        self.result, self.calls = result, []

    def __call__(self, root, val_fraction: float = 0.1) -> int:
        self.calls.append(str(root))
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


@pytest.fixture
def scan(monkeypatch):
    import gpu_train_monitor.data.datasets.imagefolder

    def install(result: int | Exception) -> CountingScan:
        stand_in = CountingScan(result)
        monkeypatch.setattr(gpu_train_monitor.data.datasets.imagefolder, "count_train_images", stand_in)
        return stand_in

    return install


def test_an_image_folder_is_counted_once_per_change_not_per_keystroke(qtbot, form, tmp_path, scan):
    counted = scan(90)
    folder = tmp_path / "pets"
    folder.mkdir()
    form.set_devices([CPU])
    form.set_config(RunConfig(dataset="imagefolder", batch_size=128))
    assert counted.calls == []  # the default folder is not scanned
    line = form.widgets["data_dir"]
    line.setFocus()
    qtbot.keyClicks(line, str(folder))  # every prefix of the path is an existing folder: none is scanned
    assert counted.calls == []
    qtbot.keyClick(line, Qt.Key.Key_Return)  # editing finished: now it is read
    assert counted.calls == [str(folder)]
    assert not form.valid and "Batch size: 128 is larger than the training set (90 images)" in form.message

    form.set_batch_size(64)  # other changes use the count already read
    form.set_batch_size(90)
    assert form.valid and len(counted.calls) == 1

    counted.result = 40
    (folder / "new-class").mkdir()  # the folder changed (its mtime): read again
    os.utime(folder, ns=(folder.stat().st_atime_ns, folder.stat().st_mtime_ns + 1_000_000_000))
    form.set_batch_size(64)
    assert len(counted.calls) == 2
    assert not form.valid and "(40 images)" in form.message


def test_an_unusable_image_folder_says_why_and_a_failing_scan_never_raises(form, tmp_path, scan):
    from gpu_train_monitor.base.errors import DatasetError

    form.set_devices([CPU])
    scan(DatasetError(f"no class folders in {tmp_path}: expected {tmp_path}/<class name>/<image>"))
    form.set_config(RunConfig(dataset="imagefolder", data_dir=str(tmp_path)))
    assert not form.valid and form.message.startswith(f"Data folder: no class folders in {tmp_path}")

    broken = tmp_path / "broken"
    broken.mkdir()
    scan(RuntimeError("the scan itself broke"))
    form.widgets["data_dir"].setText(str(broken))
    form.widgets["data_dir"].editingFinished.emit()  # raised inside the slot before: now unknown, not fatal
    assert form.valid


def test_the_real_folder_count_refuses_a_batch_larger_than_the_folder(form, tmp_path):
    from PIL import Image

    import gpu_train_monitor.data.datasets.imagefolder as imagefolder

    for name in ("cat", "dog"):
        (tmp_path / name).mkdir()
        for i in range(5):
            Image.new("RGB", (8, 8)).save(tmp_path / name / f"{i}.png")
    form.set_devices([CPU])
    form.set_config(RunConfig(dataset="imagefolder", data_dir=str(tmp_path), batch_size=64))
    train = imagefolder.count_train_images(tmp_path)
    assert 0 < train < 10
    assert not form.valid and f"larger than the training set ({train} images)" in form.message


def test_a_data_folder_that_is_a_file_says_so(form, tmp_path):
    a_file = tmp_path / "cifar.tar.gz"
    a_file.write_bytes(b"not a folder")
    form.set_config(RunConfig(dataset="cifar10", data_dir=str(a_file)))
    assert not form.valid
    assert form.message.startswith(f"Data folder: {a_file} is a file, not a folder")
    assert "does not exist" not in form.message


def test_a_data_folder_path_too_long_for_the_system_is_an_inline_error(form, tmp_path):
    too_long = str(tmp_path / ("x" * 5000))
    with_signal = []
    form.validity_changed.connect(lambda valid, message: with_signal.append((valid, message)))
    form.set_config(RunConfig(dataset="mnist"))
    form.widgets["data_dir"].setText(too_long)  # typed or pasted: a name no file system takes
    assert not form.valid
    assert form.message.startswith("Data folder: the folder name xxxxxxxx") and "5000 bytes long" in form.message
    assert len(form.message) < 300  # the path is shortened in the message
    assert with_signal[-1] == (False, form.message)


def test_a_device_that_is_not_on_this_machine_is_an_error_once_the_devices_are_known(form):
    form.set_config(RunConfig(device="cuda:3"))
    assert form.valid and form.device_problem() is None  # torch has not listed the devices yet
    form.set_devices([CPU, FAKE_GPU])
    combo = form.widgets["device"]
    assert form.value("device") == "cuda:3" and combo.currentText() == "cuda:3 (not on this machine)"
    assert not form.valid
    assert form.message == "Device: cuda:3 is not on this machine; it has cpu, cuda:0 (or auto)"
    assert form.device_problem() == "cuda:3 is not on this machine; it has cpu, cuda:0 (or auto)"
    form.set_config(RunConfig(device="cuda"))  # torch's name for the first GPU
    assert form.valid and form.value("device") == "cuda:0"


# ---- presets, fast paths, auto -------------------------------------------------------------------
def choose_preset(form: SettingsForm, name: str) -> None:
    """Pick `name` in the preset combo as a user does (activated, not a programmatic index change)."""
    combo = form.preset_row.combo
    combo.setCurrentIndex(combo.findData(name))
    combo.activated.emit(combo.currentIndex())


def test_presets_are_listed_with_their_description(form):
    from gpu_train_monitor.config.presets import PRESETS

    combo = form.preset_row.combo
    assert combo_data(combo) == ["", *PRESETS]
    assert combo.currentText() == "none" and not form.preset_row.description.isVisible()
    choose_preset(form, "speedrun")
    assert PRESETS["speedrun"].description in form.preset_row.combo.toolTip()
    assert form.preset_row.description.text().lower() == PRESETS["speedrun"].description.lower()


def test_the_speedrun_preset_on_a_gpu_sets_its_fast_settings(form):
    form.set_devices([CPU, FAKE_GPU])
    form.set_config(RunConfig(device="cuda:0", seed=7))
    choose_preset(form, "speedrun")
    values = form.values()
    assert (
        values["model"],
        values["placement"],
        values["amp"],
        values["channels_last"],
        values["compile"],
        values["batch_size"],
        values["synthetic_samples"],
    ) == ("speedrun-net", "resident", "bf16", True, True, 1024, 50_000)
    assert values["seed"] == 7 and values["device"] == "cuda:0"  # what the preset does not set is kept
    assert form.preset_row.combo.currentText() == "speedrun"


def test_the_speedrun_preset_on_the_cpu_leaves_out_what_slows_a_cpu(form):
    form.set_devices([CPU])
    form.set_config(RunConfig(device="cpu"))
    choose_preset(form, "speedrun")
    config = form.config()
    assert (config.model, config.placement, config.channels_last, config.amp, config.compile) == (
        "speedrun-net",
        "resident",
        True,
        "off",
        False,
    )
    assert form.valid
    form.set_batch_size(256)  # no longer the preset's settings: the combo stops claiming it
    assert form.preset_row.combo.currentText() == "none"
    form.set_batch_size(1024)
    assert form.preset_row.combo.currentText() == "speedrun"
    choose_preset(form, "")  # none after a preset: the settings it made go back to their defaults
    assert form.config() == RunConfig(device="cpu", **OFF_ON_CPU)


def test_cudnn_benchmark_on_the_cpu_is_refused_inline_with_the_reason(form):
    form.set_devices([CPU, FAKE_GPU])
    box = form.widgets["cudnn_benchmark"]
    form.set_config(RunConfig(device="cpu"))
    assert not box.isEnabled() and "CUDA devices only" in box.toolTip()  # unticked: greyed out, saying why
    form.set_config(RunConfig(device="cpu", cudnn_benchmark=True))  # ticked anyway (saved, another device)
    assert not form.valid
    assert form.message.startswith("cuDNN benchmark: cuDNN's autotuner runs on CUDA devices only, not on cpu")
    assert not form.message_label.isHidden()
    assert box.isEnabled()  # so it can be unticked
    box.setChecked(False)
    assert form.valid and not box.isEnabled()
    form.widgets["device"].setCurrentIndex(form.widgets["device"].findData("cuda:0"))
    assert box.isEnabled() and box.toolTip() == field_tooltip("cudnn_benchmark")


def test_compile_without_what_the_device_needs_is_refused_with_core_s_reason(form, monkeypatch):
    import gpu_train_monitor.device.fast_paths

    monkeypatch.setattr(
        gpu_train_monitor.device.fast_paths, "compile_problem", lambda device: "no compiler here (test)"
    )
    form.set_devices([CPU])
    form.set_config(RunConfig(device="cpu", compile=True))
    assert not form.valid and form.message == "torch.compile: no compiler here (test)"
    monkeypatch.undo()
    form.set_devices([CPU])  # Refresh asks again
    assert form.valid == (
        gpu_train_monitor.device.fast_paths.compile_problem(__import__("torch").device("cpu")) is None
    )


def test_auto_model_says_what_it_stands_for_once_devices_are_known(form):
    combo = form.widgets["model"]
    assert combo.currentText() == "auto" and form.value("model") == "auto"  # torch still loading
    form.set_devices([CPU, FAKE_GPU])
    assert combo.currentText() == "auto (resnet18 on this GPU)"  # auto picks the GPU
    assert form.value("model") == "auto" and form.config().model == "auto"
    form.widgets["device"].setCurrentIndex(form.widgets["device"].findData("cpu"))
    assert combo.currentText() == "auto (tiny-cnn on this CPU)"
    form.set_config(RunConfig(model="resnet18", device="cpu"))
    assert combo.currentText() == "resnet18"
    form.set_config(RunConfig(device="cpu"))
    assert combo.currentText() == "auto (tiny-cnn on this CPU)" and form.valid


# --- your own model and dataset, typed as package.module:factory ------------------------------------------


@pytest.fixture
def project(tmp_path, monkeypatch):
    """The folder the window was started from, holding the user's own modules (nothing of them runs here)."""
    (tmp_path / "mynets.py").write_text("raise SystemExit('the form must not run user code')\n", encoding="utf-8")
    (tmp_path / "mydata.py").write_text("raise SystemExit('the form must not run user code')\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_your_own_model_and_dataset_can_be_typed_beside_the_listed_ones(qtbot, form, project):
    dataset: QComboBox = form.widgets["dataset"]
    assert dataset.isEditable() and tuple(combo_data(dataset)) == BOUNDS["dataset"].choices
    form.set_models(["auto", "tiny-cnn", "resnet18"])
    form.widgets["model"].setEditText("mynets:make_net")
    dataset.setEditText("mydata.py:load")
    assert form.valid, form.message
    config = form.config()
    assert (config.model, config.dataset) == ("mynets:make_net", "mydata.py:load")
    assert "mynets" not in sys.modules  # only looked for: its code runs when a run starts
    assert not form.widgets["data_dir"].parentWidget().isEnabled()  # the factory finds its own files
    assert "your own dataset's factory finds its own files" in form.widgets["data_dir"].toolTip()
    dataset.setCurrentIndex(dataset.findData("mnist"))
    assert form.value("dataset") == "mnist" and form.widgets["data_dir"].parentWidget().isEnabled()


def test_your_own_model_and_dataset_round_trip_through_the_form(form, project):
    config = RunConfig(model="mynets:Net.build", dataset="mydata:load", device="cpu")
    form.set_config(config)
    assert form.config() == config.replace(**OFF_ON_CPU)
    assert form.widgets["dataset"].currentText() == "mydata:load"
    form.set_config(RunConfig(dataset="cifar10"))
    assert form.widgets["dataset"].currentText() == "cifar10" and form.value("dataset") == "cifar10"


@pytest.mark.parametrize(
    "field, typed, message",
    [
        (
            "dataset",
            "mydata:",
            "Dataset: 'mydata:' is not package.module:factory (e.g. mypackage.module:make_data or "
            "path/to/file.py:make_data): no callable's name after the colon",
        ),
        (
            "dataset",
            "cifar11",
            "Dataset: must be one of synthetic, cifar10, mnist, fashion-mnist, imagefolder, synthetic-text, "
            "text:PATH (a text file), or package.module:factory, got 'cifar11'",
        ),
        (
            "model",
            "nosuchmodule:make",
            "Model: nosuchmodule:make: no module named 'nosuchmodule' in the current folder "
            "({folder}) or on the Python path",
        ),
        (
            "dataset",
            "elsewhere/data.py:load",
            "Dataset: elsewhere/data.py:load: no file elsewhere/data.py (relative to the current folder, {folder})",
        ),
    ],
)
def test_a_spec_that_cannot_work_is_refused_inline(qtbot, form, project, field, typed, message):
    with qtbot.waitSignal(form.validity_changed) as changed:
        form.widgets[field].setEditText(typed)
    assert changed.args == [False, message.format(folder=project)]
    assert form.message_label.text() == message.format(folder=project) and not form.message_label.isHidden()


def test_an_unknown_model_name_says_a_spec_can_be_typed_too(form):
    form.set_models(["auto", "tiny-cnn"])
    form.widgets["model"].setEditText("resnet9000")
    assert form.message == (
        "Model: unknown model 'resnet9000'; pick one from the list, or give your own as package.module:factory"
    )


def test_the_process_count_says_what_it_counts_on_this_machine(form):
    spin, label = form.widgets["nproc"], form.labels["nproc"]
    assert label.text() == "Processes" and (spin.minimum(), spin.maximum()) == (1, BOUNDS["nproc"].maximum)
    form.set_devices([CPU])  # no GPU (as on this machine): CPU processes, up to its cores
    assert label.text() == "CPU processes"
    assert (spin.minimum(), spin.maximum()) == (1, os.cpu_count())
    assert "data-parallel" in spin.toolTip() and "batch is split evenly" in spin.toolTip()
    form.set_devices([CPU, FAKE_GPU])  # auto picks the GPU: one process per GPU
    assert label.text() == "GPUs" and spin.maximum() == 1
    form.widgets["device"].setCurrentIndex(form.widgets["device"].findData("cpu"))
    assert label.text() == "CPU processes" and spin.maximum() == os.cpu_count()


def test_sync_bn_applies_only_with_more_than_one_process(form):
    form.set_devices([CPU])
    assert not form.widgets["sync_bn"].isEnabled()
    assert form.widgets["sync_bn"].toolTip().startswith("Not used:")
    form.set_config(RunConfig(nproc=2, batch_size=64))
    assert form.widgets["sync_bn"].isEnabled()
    assert form.widgets["sync_bn"].toolTip() == field_tooltip("sync_bn")
    form.widgets["sync_bn"].setChecked(True)
    assert form.valid and form.config().sync_bn and form.config().nproc == 2


def test_a_batch_that_does_not_split_over_the_processes_is_refused_inline(form):
    form.set_devices([CPU])
    form.set_config(RunConfig(batch_size=64))
    form.widgets["nproc"].setValue(2)
    assert form.valid
    form.set_batch_size(65)
    assert not form.valid
    assert form.message.startswith("Batch size: 65 does not split evenly over 2 processes")
    assert form.message_label.isVisible() or not form.isVisible()
    form.widgets["nproc"].setValue(1)
    assert form.valid


def test_a_saved_process_count_larger_than_this_machine_stays_and_says_why(form):
    too_many = (os.cpu_count() or 1) * 2
    form.set_config(RunConfig(nproc=too_many, batch_size=too_many * 8))
    form.set_devices([CPU])
    assert form.value("nproc") == too_many  # not cut down unseen
    assert not form.valid
    assert (
        form.message == f"Processes: {too_many} asked, but this machine has {os.cpu_count()} CPU cores; "
        f"use 1 to {os.cpu_count()}"
    )


# --- in the user's language -------------------------------------------------------------------------------
CHINESE = {
    ("SettingsForm", "Training"): "训练",
    ("form_text", "Batch size"): "批大小",
    ("form_text", "Processes"): "进程数",
    ("form_text", "{label}: {detail}"): "{label}：{detail}",
    ("form_text", "an integer from {low} to {high}"): "{low} 到 {high} 之间的整数",
    ("form_widgets", "stream"): "stream（流式加载）",
    ("form_applicability", "auto ({model} on this CPU)"): "auto（此 CPU 上为 {model}）",
    ("", "CPU processes"): "CPU 进程数",
    (
        "",
        "{nproc} asked, but this machine has {limit} CPU cores; use 1 to {limit}",
    ): "要求 {nproc} 个，但本机只有 {limit} 个 CPU 核心；请使用 1 到 {limit}",
}


def test_in_chinese_words_among_the_choices_are_chinese_and_the_form_still_reads_the_identifiers(qtbot):
    """'auto', 'synthetic' and 'off' are words, not names: shown in Chinese, read back as the identifiers the
    config takes; names (tiny-cnn, cifar10, bf16) stay as they are."""
    table = {
        ("form_widgets", "auto"): "自动",
        ("form_widgets", "synthetic"): "合成数据",
        ("form_widgets", "off"): "关闭",
        ("form_applicability", "auto ({model} on this CPU)"): "自动（此 CPU 上为 {model}）",
    }
    with translated(table):
        form = SettingsForm()
        qtbot.addWidget(form)
        form.set_devices([CPU])
        form.set_config(RunConfig(device="cpu", dataset="synthetic", amp="off", placement="auto"))
        dataset, model = form.widgets["dataset"], form.widgets["model"]
        assert dataset.currentText() == "合成数据" and "cifar10" in [
            dataset.itemText(i) for i in range(dataset.count())
        ]
        assert form.widgets["amp"].currentText() == "关闭" and form.widgets["placement"].currentText() == "自动"
        assert model.currentText() == "自动（此 CPU 上为 tiny-cnn）"
        assert "（合成数据, cifar10" in dataset.toolTip() or "合成数据, cifar10" in dataset.toolTip()
        assert form.valid, form.message
        config = form.config()
        assert (config.dataset, config.amp, config.placement, config.model) == ("synthetic", "off", "auto", "auto")
        dataset.setCurrentIndex(dataset.findData("cifar10"))
        assert form.value("dataset") == "cifar10"
        dataset.setEditText("synthetic")  # typed as the CLI takes it: read as typed
        assert form.value("dataset") == "synthetic"


def test_in_chinese_the_form_shows_translated_texts_and_still_reads_the_identifiers(qtbot, locale):
    locale(QLocale(QLocale.Language.Chinese, QLocale.Country.China))
    too_many = (os.cpu_count() or 1) * 2
    with translated(CHINESE):
        form = SettingsForm()
        qtbot.addWidget(form)
        form.set_config(RunConfig(device="cpu", placement="stream", nproc=too_many, batch_size=too_many * 8))
        form.set_devices([CPU])
        assert "训练" in [box.title() for box in form.findChildren(QGroupBox)]
        assert form.labels["batch_size"].text() == "批大小"
        assert "(1 到 65,536 之间的整数)" in form.widgets["batch_size"].toolTip()  # the locale's digits
        placement = form.widgets["placement"]
        assert placement.currentText() == "stream（流式加载）" and form.value("placement") == "stream"
        assert form.labels["nproc"].text() == "CPU 进程数"
        assert not form.valid  # a message from the form's own checks, in Chinese, beside the form's label
        cores = os.cpu_count()
        assert form.message == f"进程数：要求 {too_many} 个，但本机只有 {cores} 个 CPU 核心；请使用 1 到 {cores}"

        form.widgets["nproc"].setValue(1)
        model = form.widgets["model"]
        assert model.currentText() == "auto（此 CPU 上为 tiny-cnn）"
        assert form.valid and form.value("model") == "auto"  # the text shown is not the value
        assert form.config() == RunConfig(device="cpu", placement="stream", batch_size=too_many * 8, **OFF_ON_CPU)


def test_greyed_out_ticks_are_not_in_effect_and_come_back_when_they_apply(form):
    """On the CPU pin_memory and non_blocking are greyed out: shown off, off in the config (the log's config
    line says no), and ticked again once a GPU is chosen."""
    form.set_devices([CPU, FAKE_GPU])
    form.set_config(RunConfig(device="cuda:0", placement="stream", pin_memory=True, non_blocking=True))
    assert form.config().pin_memory and form.config().non_blocking
    form.widgets["device"].setCurrentIndex(form.widgets["device"].findData("cpu"))
    for field in ("pin_memory", "non_blocking"):
        assert not form.widgets[field].isEnabled() and not form.widgets[field].isChecked()
    config = form.config()
    assert not config.pin_memory and not config.non_blocking
    from gpu_train_monitor.gui.views.event_display import config_text

    assert "pin_memory=no" in config_text(config.to_dict()) and "non_blocking=no" in config_text(config.to_dict())
    form.widgets["device"].setCurrentIndex(form.widgets["device"].findData("cuda:0"))
    assert form.config().pin_memory and form.config().non_blocking


def _wheel(widget, qtbot) -> None:
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    centre = QPointF(widget.rect().center())
    event = QWheelEvent(
        centre,
        QPointF(widget.mapToGlobal(centre.toPoint())),
        QPoint(0, 0),
        QPoint(0, -120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)


def test_the_wheel_scrolls_the_form_and_changes_a_field_only_once_it_has_the_focus(qtbot):
    """Scrolling the form with the wheel over a spin box or a combo box left the batch size 2554 instead of
    2560 unnoticed: an unfocused field passes the wheel to the scroll area."""
    from PySide6.QtWidgets import QScrollArea

    form = SettingsForm()
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setWidget(form)
    scroll.resize(400, 300)
    qtbot.addWidget(scroll)
    scroll.show()
    qtbot.waitExposed(scroll)
    form.set_config(RunConfig(batch_size=2560))
    spin, combo = form.widgets["batch_size"], form.widgets["optimizer"]
    scroll.verticalScrollBar().setValue(0)
    _wheel(spin, qtbot)
    _wheel(combo, qtbot)
    assert form.value("batch_size") == 2560 and form.value("optimizer") == "sgd"
    assert spin.focusPolicy() == Qt.FocusPolicy.StrongFocus
    assert scroll.verticalScrollBar().value() > 0  # the form scrolled instead
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus)
    _wheel(spin, qtbot)
    assert form.value("batch_size") != 2560  # focused: the wheel is the user's choice


def test_a_focused_field_the_pointer_crosses_while_the_form_scrolls_keeps_its_value(qtbot, monkeypatch):
    """Epochs "auto" became 8: it had the focus from an earlier click, and the pointer crossed it while the user
    scrolled the form. A wheel that arrives while the form is being scrolled goes on scrolling it."""
    from PySide6.QtWidgets import QScrollArea

    from gpu_train_monitor.gui.qt import widgets

    clock = [100.0]
    monkeypatch.setattr(widgets.time, "monotonic", lambda: clock[0])
    form = SettingsForm()
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setWidget(form)
    scroll.resize(400, 300)
    qtbot.addWidget(scroll)
    scroll.show()
    qtbot.waitExposed(scroll)
    form.set_config(RunConfig(batch_size=2560))
    spin = form.widgets["batch_size"]
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus)
    scroll.verticalScrollBar().setValue(0)
    _wheel(form, qtbot)  # scrolling the form over a gap
    clock[0] += 0.2
    _wheel(spin, qtbot)  # ... and on over the focused field
    assert form.value("batch_size") == 2560 and scroll.verticalScrollBar().value() > 0
    clock[0] += 5.0  # later, a wheel that starts over the focused field is the user's choice
    _wheel(spin, qtbot)
    assert form.value("batch_size") != 2560


def test_a_number_typed_counts_after_a_pause_without_enter(qtbot):
    """The predicted peak and the checks follow typing: '512' typed into the batch size is the batch size once the
    typing pauses, without Enter or Tab; a value the box does not take is not committed."""
    from PySide6.QtWidgets import QLineEdit

    from gpu_train_monitor.gui.form.field_widgets import TYPING_PAUSE_MS

    form = SettingsForm()
    qtbot.addWidget(form)
    form.set_config(RunConfig(batch_size=128))
    spin = form.widgets["batch_size"]
    editor = spin.findChild(QLineEdit)
    editor.selectAll()
    with qtbot.waitSignal(form.validity_changed, timeout=TYPING_PAUSE_MS * 4):
        qtbot.keyClicks(editor, "512")
        assert form.value("batch_size") == 128  # not per keystroke
    assert form.value("batch_size") == 512
    editor.selectAll()
    qtbot.keyClicks(editor, "0")  # below the range: not a value the box takes
    qtbot.wait(TYPING_PAUSE_MS * 2)
    assert form.value("batch_size") == 512
