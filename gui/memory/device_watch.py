"""The selected device between runs: the status bar's device label, the device's `MemoryProbe`, the poll
that keeps the memory plot live at rest (so a cache clear, or another program's memory, shows), and Clear
cache at rest. During a run the run's own reports feed the plot and the poll stays quiet. A device of the machine
connected to (`gpu_train_monitor.gui.remote`) is read there: its readings stream (about once a second) feeds the plot at
rest.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtWidgets import QLabel

from gpu_train_monitor.events.events import CacheCleared
from gpu_train_monitor.gui.form.settings_form import SettingsForm
from gpu_train_monitor.gui.qt.core_text import core_text, error_text
from gpu_train_monitor.gui.remote.connection import RemoteConnection
from gpu_train_monitor.gui.remote.readings import reading_sample
from gpu_train_monitor.gui.run.controller import RunController
from gpu_train_monitor.gui.views.run_view import RunView

IDLE_POLL_INTERVAL_MS = 250
READING_INTERVAL_S = 1.0  # a remote device's readings: about one a second


class DeviceWatch(QObject):
    """Watches the form's device once torch has loaded (`start`); `on_probe` hears of each new probe (None
    when the form names no usable device), for the other views that measure the same device."""

    def __init__(
        self,
        form: SettingsForm,
        view: RunView,
        controller: RunController,
        on_probe: Callable[[Any], None],
        parent: QObject | None = None,
        connection: RemoteConnection | None = None,
    ) -> None:
        super().__init__(parent)
        self.form, self.view, self.controller, self._on_probe = form, view, controller, on_probe
        self.connection = connection
        self.remote_device: tuple[str, str] | None = None  # (host, spec) whose readings feed the plot at rest
        self._last_x: float | None = None  # where the last reading went on the plot, and this clock's offset there
        self._reading_offset = 0.0
        self._idle_x: float | None = None  # where the idle poll's last sample went on the plot
        if connection is not None:
            connection.reading.connect(self._on_reading)
        # gpu_train_monitor.memory.probe.MemoryProbe for the selected device, once torch has loaded
        self.probe: Any = None
        self.ready = False  # torch has loaded: devices can be listed and measured
        self.label = QLabel(self.tr("device: loading PyTorch…"))
        self.timer = QTimer(self)
        self.timer.setInterval(IDLE_POLL_INTERVAL_MS)
        self.timer.timeout.connect(self._on_poll)

    def start(self) -> None:
        """Torch has loaded: list the devices (the form then reports its device) and start polling."""
        self.ready = True
        self.refresh_devices()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    @Slot()
    def refresh_devices(self) -> None:
        if not self.ready:
            return
        from gpu_train_monitor.device.devices import list_devices

        self.form.set_devices(list_devices(query_free=False))  # the form's validity_changed shows the device

    def show_device(self) -> None:
        """The status bar names the device a run would use, or says why there is none (as the form does)."""
        if self._show_remote_device() or not self.ready:
            return
        from gpu_train_monitor.base.errors import UserError
        from gpu_train_monitor.device.devices import resolve_device
        from gpu_train_monitor.memory.probe import MemoryProbe

        problem = self.form.device_problem()
        if problem is None:
            try:
                device = resolve_device(self.form.value("device"))
            except UserError as exc:
                problem = error_text(exc)
        if problem is not None:
            self.label.setText(self.tr("device: {problem}").format(problem=core_text(problem)))
            self._set_probe(None)
            return
        if self.probe is None or self.probe.device != device:
            self._set_probe(MemoryProbe(device))
            self.view.memory_plot.clear()
            self.view.run_elsewhere = False  # another device: its readings are what the numbers show now
        self.label.setText(self.tr("device: {device}").format(device=str(device)))

    def _show_remote_device(self) -> bool:
        """A remote device is selected: name it and stream its readings (True); else stop streaming (False)."""
        host = self.form.remote_host()
        spec = self.form.resolved_spec() if host is not None else None
        wanted = (host, spec) if host is not None and spec is not None else None
        if wanted != self.remote_device:
            self.remote_device = wanted
            if self.connection is not None:
                self.connection.watch_device(spec)
            if wanted is not None:
                self.view.memory_plot.clear()
                self.view.run_elsewhere = False
        if wanted is None:
            return False
        name = core_text(self.form.devices.names.get(spec, spec))  # a CPU's "(N threads)" in the user's words
        self.label.setText(self.tr("device: {spec} ({name}) on {host}").format(spec=spec, name=name, host=host))
        self._set_probe(None)  # measured there, not here
        return True

    @Slot(object)
    def _on_reading(self, data: object) -> None:
        """A reading of the remote device: plotted at rest (a run's own reports feed the plot meanwhile)."""
        if self.controller.running or self.remote_device is None or not isinstance(data, dict):
            return
        received = float(data.get("received_at", time.monotonic()))
        plot = self.view.memory_plot
        last_x = plot.data.last(0)
        if last_x is not None and last_x != self._last_x:  # a run fed the plot meanwhile: go on after it
            self._reading_offset = last_x + READING_INTERVAL_S - plot.seconds(received)
        sample = reading_sample(data, received + self._reading_offset)
        if sample is not None and data.get("device") == self.remote_device[1]:
            self.view.show_sample(sample, at_rest=True)
            self._last_x = plot.data.last(0)

    def show_torch_failed(self) -> None:
        """PyTorch could not be imported: no device can be named or measured."""
        self.label.setText(self.tr("device: PyTorch could not be loaded"))

    def _set_probe(self, probe: Any) -> None:
        self.probe = probe
        self._on_probe(probe)

    def clear_cache(self) -> None:
        """Clear cache with no run under way: return the device's cached blocks now and show what that freed."""
        if self.probe is None:
            return
        from gpu_train_monitor.memory.probe import clear_cache

        freed = clear_cache(self.probe.device)
        self.view.show_cache_cleared(CacheCleared(None, freed, self._idle_sample()))
        self._idle_x = self.view.memory_plot.data.last(0)

    @Slot()
    def _on_poll(self) -> None:
        if self.controller.running or self.probe is None:
            return
        self.view.show_sample(self._idle_sample(), at_rest=True)
        self._idle_x = self.view.memory_plot.data.last(0)

    def _idle_sample(self) -> Any:
        """The probe's reading now, on the plot's clock: when something else fed the plot since the poll's last
        sample (a run, maybe one read from the store on a clock of its own), the poll goes on right after it."""
        sample = self.probe.sample()
        plot = self.view.memory_plot
        last_x = plot.data.last(0)
        if last_x is not None and last_x != self._idle_x:
            plot.continue_at(sample.time_s, IDLE_POLL_INTERVAL_MS / 1000)
        return sample
