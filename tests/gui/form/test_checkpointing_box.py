"""The form's activation checkpointing box: in the config when ticked, greyed out with the reason for a model
that has no blocks to checkpoint, and refused inline (Start disabled) when ticked for one anyway."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QCheckBox

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.device.devices import DeviceInfo
from gpu_train_monitor.gui.form.applicability import applicability
from gpu_train_monitor.gui.form.settings_form import SettingsForm

CPU = DeviceInfo("cpu", "cpu", "Test CPU", 16_000_000_000)


@pytest.fixture
def form(qtbot) -> SettingsForm:
    form = SettingsForm()
    qtbot.addWidget(form)
    form.set_devices([CPU])
    return form


def test_ticking_it_puts_it_in_the_config(form) -> None:
    box: QCheckBox = form.widgets["activation_checkpointing"]
    assert not form.config().activation_checkpointing
    box.setChecked(True)
    assert box.isEnabled() and form.config().activation_checkpointing and form.valid


def test_a_model_without_blocks_greys_it_out_and_refuses_it_when_ticked(form) -> None:
    box: QCheckBox = form.widgets["activation_checkpointing"]
    form.set_config(RunConfig(model="googlenet"))
    assert not box.isEnabled()
    assert "googlenet has no blocks to checkpoint" in box.toolTip()

    form.set_config(RunConfig(model="googlenet", activation_checkpointing=True))  # saved settings, say
    assert box.isEnabled() and box.isChecked()  # kept so it can be undone
    assert not form.valid
    assert form.message.startswith("Activation checkpointing: googlenet has no blocks to checkpoint")

    form.widgets["model"].setEditText("resnet18")
    assert form.valid and box.isEnabled()
    assert "has no blocks" not in box.toolTip()


def test_the_reason_comes_from_the_problems_it_is_given() -> None:
    values = {**RunConfig().to_dict(), "nproc": 1}
    assert applicability(values, "cpu", {})["activation_checkpointing"] is None
    reasons = applicability(values, "cpu", {"activation_checkpointing": "googlenet has no blocks to checkpoint"})
    assert reasons["activation_checkpointing"] == "googlenet has no blocks to checkpoint"
