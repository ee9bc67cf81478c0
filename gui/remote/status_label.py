"""The status bar's word on the connection: "gpu-box · 23 ms", "gpu-box · connecting…", "gpu-box ·
reconnecting…" (why as the tooltip), "gpu-box · not connected"; hidden while no machine is asked for."""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QLabel, QWidget

from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.locale_format import integer
from gpu_train_monitor.gui.remote.connection import (
    CLOSED,
    CONNECTED,
    CONNECTING,
    FAILED,
    RECONNECTING,
    RemoteConnection,
)


class ConnectionLabel(QLabel):
    """Follows `connection`; its text is what the status bar shows."""

    def __init__(self, connection: RemoteConnection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("connectionStatus")
        self.connection = connection
        connection.state_changed.connect(self._on_changed)
        connection.latency_measured.connect(self._on_latency)
        self.show_state()

    @Slot(str)
    def _on_changed(self, _state: str) -> None:
        self.show_state()

    @Slot(float)
    def _on_latency(self, _seconds: float) -> None:
        self.show_state()

    def show_state(self) -> None:
        connection = self.connection
        host = connection.host
        if host is None or (connection.state == CLOSED and connection.info is None):
            self.hide()
            self.setText("")
            return
        state, latency = connection.state, connection.latency_s
        if state == CONNECTED and latency is not None:
            text = self.tr("{host} · {ms} ms").format(host=host, ms=integer(max(1, round(latency * 1000))))
        elif state == CONNECTED:
            text = self.tr("{host} · connected").format(host=host)
        elif state == CONNECTING:
            text = self.tr("{host} · connecting…").format(host=host)
        elif state == RECONNECTING:
            text = self.tr("{host} · reconnecting…").format(host=host)
        elif state == FAILED:
            text = self.tr("{host} · not connected").format(host=host)
        else:
            text = self.tr("{host} · disconnected").format(host=host)
        self.setText(text)
        warn = state in (RECONNECTING, FAILED)
        self.setStyleSheet(f"color: {palette.WARNING if state == RECONNECTING else palette.ERROR};" if warn else "")
        tip = {
            CONNECTED: self.tr("Connected over SSH to {host} ({name}); the round trip of the last ping"),
            CONNECTING: self.tr("Connecting over SSH to {host}"),
            RECONNECTING: self.tr("The connection to {host} dropped ({problem}); trying again"),
            FAILED: self.tr("Could not connect to {host}: {problem}"),
        }.get(state, self.tr("Not connected to {host}"))
        name = connection.info.host_name if connection.info is not None else host
        self.setToolTip(tip.format(host=host, name=name, problem=connection.problem))
        self.show()
