"""File ▸ Connect to a machine…: the host (an alias from ~/.ssh/config, user@host or user@host:port; the recent
ones offered first) and the command that runs the agent there (empty: `gpu-train-monitor agent`; a venv's path
for another install). Connect starts the connection and the dialog stays open, saying "connecting…", until the
agent has answered (then it closes) or the connection failed (then why, in red under the fields, and the dialog
stays to try again). Nothing here blocks: the connection works off the GUI thread.
"""

from __future__ import annotations

import shlex

from PySide6.QtCore import QCoreApplication, QSettings, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.core_text import error_text
from gpu_train_monitor.gui.remote.connection import FAILED, RemoteConnection
from gpu_train_monitor.gui.remote.hosts import recent_hosts, remember_host

FIELD_MIN_WIDTH = 380
DEFAULT_AGENT = "gpu-train-monitor agent"


class ConnectDialog(QDialog):
    """Host, agent command, the problem line, Connect / Cancel; accepted once `connection` is connected."""

    def __init__(self, connection: RemoteConnection, settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.connection, self._settings = connection, settings
        self._recent = recent_hosts(settings)
        self.setWindowTitle(self.tr("Connect to a machine"))
        intro = QLabel(
            self.tr(
                "Watch and drive the GPUs of another machine over SSH, with your own keys and ~/.ssh/config. "
                "Nothing listens on a port: the window runs the agent there through ssh. That machine needs "
                "gpu-train-monitor installed (the same version as here)."
            )
        )
        intro.setWordWrap(True)
        self.host_combo = QComboBox()
        self.host_combo.setEditable(True)
        self.host_combo.setMinimumWidth(FIELD_MIN_WIDTH)
        self.host_combo.lineEdit().setPlaceholderText(self.tr("gpu-box, or user@host:port"))
        for host, _command in self._recent:
            self.host_combo.addItem(host)
        self.host_combo.setToolTip(
            self.tr("A host name from ~/.ssh/config, or user@host, or user@host:port; recent ones are listed")
        )
        self.agent_edit = QLineEdit()
        self.agent_edit.setMinimumWidth(FIELD_MIN_WIDTH)
        self.agent_edit.setPlaceholderText(DEFAULT_AGENT)
        self.agent_edit.setToolTip(
            self.tr("The command that starts the agent on that machine, e.g. ~/venv/bin/gpu-train-monitor agent")
        )
        self.host_combo.currentIndexChanged.connect(self._on_host_chosen)
        if self._recent:
            self.agent_edit.setText(self._recent[0][1])
        form = QFormLayout()
        form.addRow(self.tr("Host:"), self.host_combo)
        form.addRow(self.tr("Agent command:"), self.agent_edit)
        self.message_label = QLabel()
        self.message_label.setObjectName("connectMessage")
        self.message_label.setWordWrap(True)
        self.message_label.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.connect_button = self.buttons.addButton(self.tr("Connect"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.try_connect)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)  # grows as a long problem line wraps
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.message_label)
        layout.addWidget(self.buttons)
        connection.connected.connect(self._on_connected)
        connection.failed.connect(self._on_failed)
        self._waiting = False

    @property
    def host(self) -> str:
        return self.host_combo.currentText().strip()

    @Slot(int)
    def _on_host_chosen(self, index: int) -> None:
        if 0 <= index < len(self._recent):
            self.agent_edit.setText(self._recent[index][1])

    @Slot()
    def try_connect(self) -> None:
        """Check the host and start connecting; the answer comes as the connection's signal."""
        if not self.host:
            self._say(self.tr("Type the machine to connect to."), error=True)
            return
        problem = agent_command_problem(self.agent_edit.text())
        if problem is not None:
            self._say(problem, error=True)
            return
        try:
            self.connection.open(self.host, self.agent_edit.text())
        except UserError as exc:
            self._say(error_text(exc), error=True)
            return
        self._waiting = True
        self.connect_button.setEnabled(False)
        self._say(self.tr("connecting to {host}…").format(host=self.host), error=False)

    @Slot(object)
    def _on_connected(self, _info: object) -> None:
        if not self._waiting:
            return
        self._waiting = False
        remember_host(self._settings, self.connection.host or self.host, self.connection.agent_command)
        self.accept()

    @Slot(str)
    def _on_failed(self, problem: str) -> None:
        if not self._waiting:
            return
        self._waiting = False
        self.connect_button.setEnabled(True)
        self._say(self.tr("Could not connect: {problem}").format(problem=problem), error=True)

    def _say(self, text: str, error: bool) -> None:
        self.message_label.setText(text)
        self.message_label.setStyleSheet(f"color: {palette.ERROR if error else palette.QUIET};")
        self.message_label.show()
        self.adjustSize()

    def reject(self) -> None:
        """Cancel while connecting stops trying; after a failure, it lets the failure go (the status bar's "not
        connected", this dialog's red line): nothing is asked for any more."""
        if self._waiting:
            self._waiting = False
            self.connection.forget()
        elif self.connection.state == FAILED:
            self.connection.forget()
        self.message_label.clear()
        self.message_label.hide()
        self.connect_button.setEnabled(True)
        super().reject()


def agent_command_problem(text: str) -> str | None:
    """Why the Agent command field cannot be read as a command line (a quote or a trailing backslash without its
    pair), in the dialog's words; None when it can (empty: the default command)."""
    try:
        shlex.split(text)
    except ValueError:
        return QCoreApplication.translate(
            "ConnectDialog",
            "The agent command cannot be read: a quote or a backslash in it has no pair. Type it as you would in "
            "a shell, e.g. ~/venv/bin/gpu-train-monitor agent",
        )
    return None
