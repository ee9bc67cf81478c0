"""The connected machine's devices in the form's device box: named with the host, chosen like this machine's,
the config names the plain device (the machine goes with the Start), the checks are that machine's, and on
disconnecting a remote choice goes back to auto."""

from __future__ import annotations

import pytest

from gpu_train_monitor.gui.form.settings_form import SettingsForm
from gpu_train_monitor.gui.remote.devices import remote_devices, split_key
from tests.gui.remote.fake_link import CPU, H200


@pytest.fixture
def form(qtbot):
    form = SettingsForm()
    qtbot.addWidget(form)
    return form


def entries(form: SettingsForm) -> list[tuple[str, str]]:
    combo = form.widgets["device"]
    return [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())]


def choose(form: SettingsForm, data: str) -> None:
    combo = form.widgets["device"]
    combo.setCurrentIndex(combo.findData(data))


def test_the_remote_devices_are_listed_after_this_machines_named_with_the_host(form):
    form.set_remote_devices(remote_devices("gpu-box", "gpu-box-7", [CPU, H200]))
    listed = entries(form)
    assert listed[-2:] == [
        ("cpu on gpu-box: CPU (16 threads) (128.00 GB)", "cpu@gpu-box"),
        ("cuda:0 on gpu-box: NVIDIA H200 (150.00 GB)", "cuda:0@gpu-box"),
    ]
    assert listed[0][1] == "auto"  # this machine's come first
    combo = form.widgets["device"]
    assert combo.itemData(combo.count() - 1, 3) == "cuda:0 of gpu-box (gpu-box-7): NVIDIA H200, 150.00 GB"  # tooltip


def test_choosing_a_remote_gpu_gives_a_valid_config_of_that_device_and_names_the_machine(form):
    form.set_remote_devices(remote_devices("me@gpu-box:2222", "gpu-box-7", [CPU, H200]))
    choose(form, "cuda:0@me@gpu-box:2222")
    assert form.remote_host() == "me@gpu-box:2222"
    assert form.value("device") == "cuda:0" and form.device_kind() == "cuda"
    assert form.valid, form.message
    assert form.config().device == "cuda:0"
    assert form.nproc_meaning().label == "GPUs"  # it counts that machine's GPUs (one), not this one's


def test_a_data_folder_missing_here_does_not_stop_a_run_there(form, tmp_path):
    form.set_remote_devices(remote_devices("gpu-box", "gpu-box", [H200]))
    form.widgets["dataset"].setCurrentIndex(form.widgets["dataset"].findData("imagefolder"))
    form.widgets["data_dir"].setText(str(tmp_path / "only-on-the-gpu-box"))
    assert not form.valid  # on this machine the folder must be there
    choose(form, "cuda:0@gpu-box")
    assert form.valid, form.message  # that machine's run checks its own folder


def test_setting_a_config_keeps_the_remote_machine_when_it_has_the_device(form):
    from gpu_train_monitor.config.run_config import RunConfig

    form.set_remote_devices(remote_devices("gpu-box", "gpu-box", [CPU, H200]))
    choose(form, "cuda:0@gpu-box")
    form.set_config(RunConfig(device="cuda:0", batch_size=64))  # a preset, a restored config
    assert form.remote_host() == "gpu-box" and form.value("batch_size") == 64


def test_disconnecting_takes_the_remote_devices_away_and_a_remote_choice_goes_back_to_auto(form):
    form.set_remote_devices(remote_devices("gpu-box", "gpu-box", [CPU, H200]))
    choose(form, "cuda:0@gpu-box")
    form.set_remote_devices(())
    assert all(split_key(data)[1] is None for _text, data in entries(form))
    assert form.remote_host() is None and form.value("device") == "auto"


def test_the_agents_malformed_entries_are_left_out():
    listed = remote_devices(
        "h", "h", [H200, {"spec": "x@y", "kind": "cuda"}, {"kind": "cuda"}, "cuda", {"spec": "tpu", "kind": "tpu"}]
    )
    assert [d.spec for d in listed] == ["cuda:0"]
    assert split_key("cuda:0@me@h:22") == ("cuda:0", "me@h:22") and split_key("cuda:0") == ("cuda:0", None)


def test_what_a_remote_cpu_cannot_run_is_greyed_out_as_for_this_machines(form):
    """cuDNN's autotuner on that machine's CPU: greyed out with the reason, as on this machine's CPU; on its GPU it
    applies."""
    form.set_remote_devices(remote_devices("gpu-box", "gpu-box-7", [CPU, H200]))
    benchmark = form.widgets["cudnn_benchmark"]
    choose(form, "cpu@gpu-box")
    assert not benchmark.isEnabled()
    assert "cuDNN's autotuner runs on CUDA devices only, not on cpu" in benchmark.toolTip()
    choose(form, "cuda:0@gpu-box")
    assert benchmark.isEnabled()
