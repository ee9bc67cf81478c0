"""The window's hold on the machine it is connected to (issue: the GPU is on another machine): File ▸ Connect to a
machine… and Disconnect, `--remote HOST`, the status bar's "HOST · 23 ms", the remote devices in the form's
device box once the agent has listed them, what the log says as the connection comes, drops and comes back, and
which machine a Start, a comparison, a batch-size search or a watched script runs on. What cannot run there (memory
history, Clear cache at rest) is disabled with the reason as its tooltip, never run here unseen.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QSettings, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.gui.form.settings_form import SettingsForm
from gpu_train_monitor.gui.launch.remote_command import RemoteMachine
from gpu_train_monitor.gui.memory.nvml_panel import NvmlPanel
from gpu_train_monitor.gui.qt.core_text import core_text, error_text
from gpu_train_monitor.gui.remote.connect_dialog import ConnectDialog
from gpu_train_monitor.gui.remote.connection import CLOSED, CONNECTING, FAILED, RemoteConnection
from gpu_train_monitor.gui.remote.hosts import remember_host
from gpu_train_monitor.gui.remote.readings import reading_gpu_status, reading_sample
from gpu_train_monitor.gui.remote.status_label import ConnectionLabel
from gpu_train_monitor.gui.views.log_panel import LogPanel


class RemoteMachineControls(QObject):
    """`connection`, its status bar `label`, the File menu's `connect_action` and `disconnect_action`."""

    def __init__(
        self,
        connection: RemoteConnection,
        form: SettingsForm,
        log: LogPanel,
        settings: QSettings,
        parent: QWidget,
        nvml_panel: NvmlPanel | None = None,
    ) -> None:
        super().__init__(parent)
        self.connection, self.form, self.log, self.settings, self._parent = connection, form, log, settings, parent
        self.nvml_panel = nvml_panel
        self.label = ConnectionLabel(connection)
        self.dialog: ConnectDialog | None = None  # the last Connect dialog opened
        self._reached: str | None = None  # the host this connection reached (a connection again is a reconnection)
        self.connect_action = QAction(self.tr("Connect to a machine…"), self)
        self.connect_action.setStatusTip(
            self.tr("Watch and drive the GPUs of another machine over SSH (nothing listens on a port)")
        )
        self.connect_action.triggered.connect(self.open_dialog)
        self.disconnect_action = QAction(self.tr("Disconnect"), self)
        self.disconnect_action.setStatusTip(self.tr("Close the connection; runs started there go on"))
        self.disconnect_action.triggered.connect(self.disconnect)
        self.disconnect_action.setEnabled(False)
        connection.connected.connect(self._on_connected)
        connection.failed.connect(self._on_failed)
        connection.lost.connect(self._on_lost)
        connection.state_changed.connect(self._on_state)
        connection.reading.connect(self._on_reading)

    @property
    def host(self) -> str | None:
        return self.connection.host

    # ---- connecting ------------------------------------------------------------------------------
    @Slot()
    def open_dialog(self) -> None:
        self.dialog = ConnectDialog(self.connection, self.settings, self._parent.window())
        self.dialog.open()  # window-modal; the window goes on drawing

    def connect_to(self, host: str, agent_command: str = "") -> str | None:
        """Connect to `host` (`--remote HOST`); why it cannot even be tried (a host ssh would misread), else None:
        a failure to connect comes later, in the log and the status bar."""
        try:
            self.connection.open(host, agent_command)
        except UserError as exc:
            text = error_text(exc)
            self.log.add(self.tr("cannot connect to {host}: {problem}").format(host=host, problem=text), "error")
            return text
        self.log.add(self.tr("connecting to {host} over SSH…").format(host=host))
        return None

    @Slot()
    def disconnect(self) -> None:
        host = self.connection.host
        self.connection.forget()
        if host is not None:
            self.log.add(self.tr("disconnected from {host}; runs started there go on").format(host=host))

    @Slot(object)
    def _on_connected(self, info: object) -> None:
        devices = info.devices  # gpu_train_monitor.gui.remote.connection.Connected
        if self._reached == info.host:  # back after a drop
            self.log.add(self.tr("reconnected to {host}").format(host=info.host))
            self.form.set_remote_devices(devices)
            return
        self._reached = info.host
        remember_host(self.settings, info.host, self.connection.agent_command)
        names = self.tr(", ").join(
            self.tr("{spec} ({name})").format(spec=d.spec, name=core_text(d.name)) for d in devices
        ) or self.tr("none")
        self.log.add(
            self.tr("connected to {host} ({name}, gpu-train-monitor {version}); its devices: {devices}").format(
                host=info.host, name=info.host_name, version=info.app or "?", devices=names
            )
        )
        self.form.set_remote_devices(devices)
        self.disconnect_action.setEnabled(True)

    @Slot(str)
    def _on_failed(self, problem: str) -> None:
        self.log.add(
            self.tr("could not connect to {host}: {problem}").format(host=self.connection.host, problem=problem),
            "error",
        )
        self.form.set_remote_devices(())
        self.disconnect_action.setEnabled(False)

    @Slot(str)
    def _on_lost(self, problem: str) -> None:
        self.log.add(
            self.tr("the connection to {host} dropped ({problem}); reconnecting, runs there go on").format(
                host=self.connection.host, problem=problem
            ),
            "warning",
        )

    @Slot(str)
    def _on_state(self, state: str) -> None:
        self.disconnect_action.setEnabled(self.connection.active)
        if state in (CONNECTING, FAILED, CLOSED):  # a new connection, or none: its first success is told in full
            self._reached = None
        if state == CLOSED and self.connection.host is None:
            self.form.set_remote_devices(())

    @Slot(object)
    def _on_reading(self, data: object) -> None:
        """The GPU (NVML) tab shows the selected remote GPU's device-wide readings, as that machine reads them."""
        host = self.form.remote_host()
        if self.nvml_panel is None or host is None or not isinstance(data, dict):
            return
        if data.get("device") != self.form.resolved_spec():
            return
        device = str(data.get("device") or "")
        # the allocator's cache and retries as that machine counts them (an older agent's reading has no counts)
        self.nvml_panel.show_cache(reading_sample(data, 0.0), device.split(":")[0])
        status = reading_gpu_status(data)
        if status is None:
            self.nvml_panel.show_unavailable(
                self.tr("{host} has no NVML readings for {device} (NVIDIA GPUs with a driver only).").format(
                    host=host, device=data.get("device")
                )
            )
            return
        sample = data.get("sample") if isinstance(data.get("sample"), dict) else {}
        reserved = sample.get("reserved_bytes") if sample.get("has_allocator") else None
        self.nvml_panel.show_status(status, reserved)

    # ---- where runs go ---------------------------------------------------------------------------
    def machine(self) -> RemoteMachine | None:
        """The machine the form's device is on (None: this one)."""
        host = self.form.remote_host()
        if host is None:
            return None
        agent = self.connection.agent_command if host == self.connection.host else ""
        return RemoteMachine(host, agent)

    def watch_machine(self) -> RemoteMachine | None:
        """Where File ▸ Watch a script… runs: the machine connected to, else this one."""
        if self.connection.host is None or not self.connection.active:
            return None
        return RemoteMachine(self.connection.host, self.connection.agent_command)

    def not_here_yet(self) -> str | None:
        """Why memory history and Clear cache at rest are off: the form's device is another machine's (Start,
        Compare, the finder and watched scripts run there)."""
        host = self.form.remote_host()
        if host is None:
            return None
        return self.tr("Only on this machine's devices: the selected device is on {host}").format(host=host)

    def close(self) -> None:
        self.connection.close()
