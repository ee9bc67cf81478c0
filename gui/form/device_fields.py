"""The settings form's widgets that show this machine's devices: the device combo, filled from the devices
torch listed (a device that went away stays, flagged, so its check can say why) and those of the machine
connected to (`gpu_train_monitor.gui.remote`: "NVIDIA H200 on gpu-box", its data 'cuda:0@gpu-box'), and the process
count, labelled and bounded by what it counts on the selected device. The texts keep the form's translation context.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QComboBox, QLabel, QSpinBox

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.config.bounds import BOUNDS
from gpu_train_monitor.gui.form.checks import NprocMeaning, normalised_device
from gpu_train_monitor.gui.form.device_table import DeviceTable
from gpu_train_monitor.gui.form.text import field_tooltip
from gpu_train_monitor.gui.qt.core_text import core_text
from gpu_train_monitor.gui.remote.devices import RemoteDevice, remote_key, split_key


def fill_device_combo(combo: QComboBox, devices: Sequence[Any], best: str) -> None:
    """List `devices` (`gpu_train_monitor.device.devices.list_devices()`) after auto, which names `best`, the spec it
    stands for; the caller keeps the current choice."""
    combo.clear()
    combo.addItem(QCoreApplication.translate("SettingsForm", "auto ({device})").format(device=best), "auto")
    for d in devices:
        name = core_text(d.name)  # the CPU's "(N threads)" is a Message
        capacity = format_bytes(d.capacity_bytes)
        combo.addItem(
            QCoreApplication.translate("SettingsForm", "{spec}: {name} ({capacity})").format(
                spec=d.spec, name=name, capacity=capacity
            ),
            d.spec,
        )
        combo.setItemData(
            combo.count() - 1,
            QCoreApplication.translate("SettingsForm", "{name}, {capacity}").format(name=name, capacity=capacity),
            Qt.ItemDataRole.ToolTipRole,
        )


def add_remote_devices(combo: QComboBox, devices: Sequence[RemoteDevice]) -> None:
    """List a remote machine's devices after this machine's, each named with its host."""
    for d in devices:
        capacity = format_bytes(d.capacity_bytes)
        name = core_text(d.name)  # a CPU's "(N threads)", read back as core's Message
        combo.addItem(
            QCoreApplication.translate("SettingsForm", "{spec} on {host}: {name} ({capacity})").format(
                spec=d.spec, host=d.host, name=name, capacity=capacity
            ),
            d.key,
        )
        combo.setItemData(
            combo.count() - 1,
            QCoreApplication.translate("SettingsForm", "{spec} of {host} ({host_name}): {name}, {capacity}").format(
                spec=d.spec, host=d.host, host_name=d.host_name, name=name, capacity=capacity
            ),
            Qt.ItemDataRole.ToolTipRole,
        )


def refill_device_combo(
    combo: QComboBox, listed: Sequence[Any], local: DeviceTable, remote: Sequence[RemoteDevice]
) -> None:
    """This machine's `listed` devices (none yet: the entries there are kept), then the `remote` ones, keeping
    the choice: a remote device no longer listed (disconnected) goes back to auto."""
    current = combo.currentData()
    if listed:
        fill_device_combo(combo, listed, local.best)
    else:
        for index in reversed(range(combo.count())):
            if split_key(combo.itemData(index))[1] is not None:
                combo.removeItem(index)
    add_remote_devices(combo, remote)
    index = combo.findData(current) if split_key(current)[1] is not None else -1
    if index < 0:
        index = device_index(combo, current if split_key(current)[1] is None and current else "auto", local.known)
    combo.setCurrentIndex(index)


def device_index(combo: QComboBox, spec: str, known: bool, host: str | None = None) -> int:
    """The combo's index for `spec` (on the remote machine `host` when it has it); a device not listed gets an
    entry that says so (its check explains). `known`: whether torch has listed the devices yet."""
    if host is not None and combo.findData(remote_key(spec, host)) >= 0:
        return combo.findData(remote_key(spec, host))
    index = combo.findData(spec)
    if index < 0:
        index = combo.findData(normalised_device(spec))
    if index < 0:
        text = (
            QCoreApplication.translate("SettingsForm", "{spec} (not on this machine)")
            if known
            else QCoreApplication.translate("SettingsForm", "{spec} (not found yet)")
        )
        combo.addItem(text.format(spec=spec), spec)
        index = combo.count() - 1
    return index


def show_nproc_meaning(spin: QSpinBox, label: QLabel, meaning: NprocMeaning) -> None:
    """Label and bound the process count by what it counts on the selected device: "GPUs" up to this machine's
    CUDA GPUs, else "CPU processes" up to its cores. A larger saved value stays (the form's check says why it
    cannot run) rather than being cut down unseen."""
    label.setText(core_text(meaning.label))
    limit = meaning.limit if meaning.limit is not None else int(BOUNDS["nproc"].maximum)
    spin.setMaximum(max(limit, spin.value()))
    spin.setToolTip(field_tooltip("nproc") if meaning.limit is None else core_text(meaning.tooltip))
    label.setToolTip(spin.toolTip())
