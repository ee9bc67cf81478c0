"""`gpu-train-monitor --remote HOST`: a HOST ssh would misread, or --agent-command alone, is one line and exit 2
before any window opens; a good one connects the window at once (off the GUI thread)."""

from __future__ import annotations

from gpu_train_monitor.gui.app import main, run_window


def test_a_host_ssh_would_misread_is_one_line_and_exit_2(capsys):
    assert main(["--remote", "-oProxyCommand=touch /tmp/owned"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu-train-monitor: error: ") and err.count("\n") == 1


def test_agent_command_alone_says_to_give_the_host_too(capsys):
    assert main(["--agent-command", "~/venv/bin/gpu-train-monitor agent"]) == 2
    err = capsys.readouterr().err
    assert "--remote" in err and err.count("\n") == 1


def test_the_window_connects_to_the_host_it_was_started_with(monkeypatch, qtbot, settings):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from gpu_train_monitor.gui.window.main_window import MainWindow

    asked: list[tuple[str, str]] = []
    seen: list[MainWindow] = []

    def connect_to(self, host: str, agent_command: str = "") -> None:
        asked.append((host, agent_command))

    monkeypatch.setattr("gpu_train_monitor.gui.window.remote_machine.RemoteMachineControls.connect_to", connect_to)
    monkeypatch.setattr("gpu_train_monitor.gui.window.settings.user_settings", lambda: settings)  # not the user's

    def close_soon() -> None:
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, MainWindow) and widget.isVisible():
                seen.append(widget)
                widget.close()

    QTimer.singleShot(300, close_soon)
    run_window(None, remote="me@gpu-box", agent_command="venv/bin/gpu-train-monitor agent", record=False)
    assert asked == [("me@gpu-box", "venv/bin/gpu-train-monitor agent")]
    assert seen
