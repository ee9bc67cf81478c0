"""File ▸ Connect to a machine…: the recent hosts offered with the agent command each was reached with, a
failure said in red under the fields with the dialog left open to try again, a success closing it and putting
the host first among the recent ones."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialog

from gpu_train_monitor.gui.remote.connect_dialog import ConnectDialog
from gpu_train_monitor.gui.remote.connection import RemoteConnection
from gpu_train_monitor.gui.remote.hosts import MAX_RECENT, recent_hosts, remember_host
from gpu_train_monitor.remote.client.failures import UnknownHost, classify
from tests.gui.remote.fake_link import FakeAgent

WAIT_MS = 10_000


def make_dialog(qtbot, settings: QSettings, agent: FakeAgent) -> tuple[ConnectDialog, RemoteConnection]:
    connection = RemoteConnection(link_factory=agent, ping_interval_s=0.05)
    dialog = ConnectDialog(connection, settings)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog, connection


def test_a_failure_is_said_under_the_fields_and_the_dialog_stays_to_try_again(qtbot, settings):
    agent = FakeAgent([UnknownHost("cannot find gpu-bx: no such host or ~/.ssh/config alias")])
    dialog, connection = make_dialog(qtbot, settings, agent)
    dialog.host_combo.setEditText("gpu-bx")
    with qtbot.waitSignal(connection.failed, timeout=WAIT_MS):
        dialog.connect_button.click()
        assert dialog.message_label.text() == "connecting to gpu-bx…" and not dialog.connect_button.isEnabled()
    assert dialog.isVisible() and dialog.connect_button.isEnabled()
    assert dialog.message_label.text() == "Could not connect: cannot find gpu-bx: no such host or ~/.ssh/config alias"
    assert recent_hosts(settings) == []  # only a machine reached is remembered

    dialog.host_combo.setEditText("gpu-box")
    dialog.agent_edit.setText("~/venv/bin/gpu-train-monitor agent")
    with qtbot.waitSignal(dialog.accepted, timeout=WAIT_MS):
        dialog.connect_button.click()
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert recent_hosts(settings) == [("gpu-box", "~/venv/bin/gpu-train-monitor agent")]
    assert agent.links[-1].target.agent_command == ("~/venv/bin/gpu-train-monitor", "agent")
    assert connection.close()


def test_an_empty_host_or_one_ssh_would_misread_is_refused_at_once(qtbot, settings):
    dialog, connection = make_dialog(qtbot, settings, FakeAgent())
    dialog.connect_button.click()
    assert dialog.message_label.text() == "Type the machine to connect to."
    dialog.host_combo.setEditText("-oProxyCommand=touch /tmp/x")
    dialog.connect_button.click()
    assert dialog.message_label.text() and connection.host is None and dialog.isVisible()


def test_the_recent_hosts_come_first_with_their_agent_command(qtbot, settings):
    for index in range(MAX_RECENT + 2):
        remember_host(settings, f"box{index}", f"agent{index}")
    remember_host(settings, "box3", "venv/bin/gpu-train-monitor agent")  # again: moved first, not twice
    dialog, _connection = make_dialog(qtbot, settings, FakeAgent())
    hosts = [dialog.host_combo.itemText(i) for i in range(dialog.host_combo.count())]
    assert hosts[:3] == ["box3", "box9", "box8"] and len(hosts) == MAX_RECENT
    assert dialog.host == "box3" and dialog.agent_edit.text() == "venv/bin/gpu-train-monitor agent"
    dialog.host_combo.setCurrentIndex(1)
    assert dialog.agent_edit.text() == "agent9"


def test_cancel_while_connecting_stops_trying(qtbot, settings):
    dialog, connection = make_dialog(qtbot, settings, FakeAgent())
    dialog.host_combo.setEditText("gpu-box")
    dialog.connect_button.click()
    dialog.reject()
    assert connection.host is None and not connection.active


def test_the_dialog_speaks_of_its_agent_command_field_not_of_a_cli_option(qtbot, settings):
    missing = classify("gpu-box", 127, "bash: gpu-train-monitor: command not found", "gpu-train-monitor agent")
    dialog, connection = make_dialog(qtbot, settings, FakeAgent([missing]))
    dialog.host_combo.setEditText("gpu-box")
    dialog.agent_edit.setText("'~/venv/bin/gpu-train-monitor agent")  # a quote without its pair
    dialog.connect_button.click()
    said = dialog.message_label.text()
    assert said.startswith("The agent command cannot be read") and "--agent-command" not in said
    assert connection.host is None  # nothing was tried

    dialog.agent_edit.clear()  # the default command, which that machine has not installed
    with qtbot.waitSignal(connection.failed, timeout=WAIT_MS):
        dialog.connect_button.click()
    said = dialog.message_label.text()
    assert "gpu-train-monitor is not installed on gpu-box" in said
    assert "Agent command" in said and "--agent-command" not in said


def test_cancel_after_a_failure_lets_the_failure_go(qtbot, settings):
    from gpu_train_monitor.gui.remote.status_label import ConnectionLabel

    agent = FakeAgent([UnknownHost("cannot find gpu-bx: no such host or ~/.ssh/config alias")])
    dialog, connection = make_dialog(qtbot, settings, agent)
    status = ConnectionLabel(connection)  # the window's status bar
    qtbot.addWidget(status)
    dialog.host_combo.setEditText("gpu-bx")
    with qtbot.waitSignal(connection.failed, timeout=WAIT_MS):
        dialog.connect_button.click()
    assert dialog.message_label.isVisible() and status.text() == "gpu-bx · not connected"
    dialog.reject()
    assert not dialog.message_label.isVisible() and not dialog.message_label.text()
    assert connection.host is None and status.isHidden()  # no "not connected" left in the status bar
