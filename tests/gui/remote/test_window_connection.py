"""The window's File ▸ Connect to a machine… / Disconnect with a scripted agent: connected, the form lists that
machine's devices and the status bar shows it; on one of its devices Start, Compare and the finder are on (they run
there), what runs only here (memory history, Clear cache at rest) is off with the reason as its tooltip; Disconnect
takes it all away."""

from __future__ import annotations

from gpu_train_monitor.gui.remote.connection import RemoteConnection
from tests.gui.remote.fake_link import FakeAgent

WAIT_MS = 10_000


def connect(qtbot, window, agent: FakeAgent) -> None:
    window.parts.connection._link_factory = agent  # the window's own connection, with no ssh behind it
    with qtbot.waitSignal(window.parts.connection.connected, timeout=WAIT_MS):
        assert window.parts.remote.connect_to("gpu-box") is None


def test_connect_then_disconnect_from_the_file_menu(qtbot, make_window):
    window = make_window()
    file_menu = [action.text() for action in window.parts.menus.file_menu.actions()]
    assert file_menu[:2] == ["Connect to a machine…", "Disconnect"]
    assert not window.parts.remote.disconnect_action.isEnabled()
    assert window.parts.remote.label.isHidden()
    connect(qtbot, window, FakeAgent())
    combo = window.parts.form.widgets["device"]
    assert combo.findData("cuda:0@gpu-box") >= 0 and combo.findData("cpu@gpu-box") >= 0
    assert window.parts.remote.disconnect_action.isEnabled() and not window.parts.remote.label.isHidden()
    qtbot.waitUntil(lambda: window.parts.remote.label.text() == "gpu-box · 23 ms", timeout=WAIT_MS)
    assert any(
        "connected to gpu-box (gpu-box-7, gpu-train-monitor 9.9)" in line for line in window.parts.view.log.lines()
    )

    combo.setCurrentIndex(combo.findData("cuda:0@gpu-box"))
    reason = "Only on this machine's devices: the selected device is on gpu-box"
    assert window.parts.buttons.start_button.isEnabled(), window.parts.buttons.start_button.toolTip()
    assert window.parts.buttons.compare_button.isEnabled(), window.parts.buttons.compare_button.toolTip()
    assert (
        window.parts.insight.finder_panel.find_button.isEnabled()
        and window.parts.insight.finder_panel.find_button.toolTip() != reason
    )
    assert window.parts.insight.finder_panel.machine_source().host == "gpu-box"
    assert (
        not window.parts.insight.record_history.isEnabled() and window.parts.insight.record_history.toolTip() == reason
    )
    assert not window.parts.buttons.clear_button.isEnabled() and window.parts.buttons.clear_button.toolTip() == reason
    ready = [item.name for item in window.parts.compare_menu.ready()]  # from that machine's devices: it has a GPU
    assert any("GPU" in name for name in ready), ready

    window.parts.remote.disconnect_action.trigger()
    assert window.parts.remote.label.isHidden() and not window.parts.remote.disconnect_action.isEnabled()
    assert combo.findData("cuda:0@gpu-box") < 0 and window.parts.form.value("device") == "auto"
    assert (
        window.parts.insight.finder_panel.find_button.isEnabled()
        and window.parts.insight.finder_panel.find_button.toolTip() != reason
    )
    assert "disconnected from gpu-box; runs started there go on" in window.parts.view.log.lines()[-1]
    assert not window.parts.connection.active


def test_the_connect_dialog_opens_over_the_window_with_the_recent_hosts(qtbot, make_window, settings):
    from gpu_train_monitor.gui.remote.hosts import remember_host

    remember_host(settings, "gpu-box", "venv/bin/gpu-train-monitor agent")
    window = make_window()
    window.parts.remote.connect_action.trigger()
    dialog = window.parts.remote.dialog
    qtbot.addWidget(dialog)
    assert dialog.isVisible() and dialog.windowTitle() == "Connect to a machine"
    assert dialog.host == "gpu-box" and dialog.agent_edit.text() == "venv/bin/gpu-train-monitor agent"
    assert isinstance(dialog.connection, RemoteConnection) and dialog.connection is window.parts.connection
    dialog.reject()


def test_a_comparison_on_a_machine_that_cannot_be_reached_is_one_line_and_the_window_recovers(
    qtbot, make_window, monkeypatch
):
    unreachable = "sh -c 'echo \"ssh: Could not resolve hostname gpu-box: Name or service not known\" >&2; exit 255'"
    monkeypatch.setenv("GPU_TRAIN_MONITOR_SSH", unreachable)  # what the comparison's own connection runs
    window = make_window()
    connect(qtbot, window, FakeAgent())
    combo = window.parts.form.widgets["device"]
    combo.setCurrentIndex(combo.findData("cpu@gpu-box"))
    assert window.start_comparison([{"batch_size": 8}, {"batch_size": 16}], "batch") is None
    qtbot.waitUntil(lambda: not window.controller.running, timeout=WAIT_MS)
    said = [line for line in window.parts.view.log.lines() if "could not run: " in line]
    assert len(said) == 1 and "gpu-box" in said[0], window.parts.view.log.lines()[-4:]
    assert not any("Traceback" in line or "crashed" in line for line in window.parts.view.log.lines())
    assert window.parts.buttons.compare_button.isEnabled() and window.parts.buttons.start_button.isEnabled()
