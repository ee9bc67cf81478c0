"""The window's connection to a remote machine, with a scripted agent in place of ssh: it connects off the GUI
thread and lists the agent's devices, says in one line why a first connection failed (and does not retry),
shows "HOST · 23 ms" in the status bar, notices a drop ("reconnecting…"), connects again by itself, and hands
the watched device's readings to the GUI thread."""

from __future__ import annotations

import threading

import pytest

from gpu_train_monitor.gui.remote.connection import CONNECTED, FAILED, RECONNECTING, RemoteConnection
from gpu_train_monitor.gui.remote.status_label import ConnectionLabel
from gpu_train_monitor.remote.client.failures import AuthenticationFailed, ConnectionLost, VersionMismatch
from tests.gui.remote.fake_link import FakeAgent

WAIT_MS = 10_000


@pytest.fixture
def make_connection(qtbot):
    made: list[RemoteConnection] = []

    def make(agent: FakeAgent) -> RemoteConnection:
        connection = RemoteConnection(link_factory=agent, ping_interval_s=0.05)
        made.append(connection)
        return connection

    yield make
    for connection in made:
        assert connection.close(), "the connection's thread did not end"


def test_connecting_lists_the_devices_named_with_the_host_and_the_status_bar_shows_the_latency(qtbot, make_connection):
    agent = FakeAgent()
    connection = make_connection(agent)
    label = ConnectionLabel(connection)
    qtbot.addWidget(label)
    with qtbot.waitSignal(connection.connected, timeout=WAIT_MS) as connected:
        connection.open("me@gpu-box")
        assert label.text() == "me@gpu-box · connecting…"  # at once: the ssh login happens off the GUI thread
    info = connected.args[0]
    assert (info.host, info.host_name, info.app) == ("me@gpu-box", "gpu-box-7", "9.9")
    assert [(d.key, d.name, d.kind) for d in info.devices] == [
        ("cpu@me@gpu-box", "CPU (16 threads)", "cpu"),
        ("cuda:0@me@gpu-box", "NVIDIA H200", "cuda"),
    ]
    qtbot.waitUntil(lambda: label.text() == "me@gpu-box · 23 ms", timeout=WAIT_MS)
    assert not label.isHidden() and connection.state == CONNECTED
    assert agent.links[0].target.host == "me@gpu-box"


def test_a_first_connection_that_fails_says_why_in_one_line_and_is_not_retried(qtbot, make_connection):
    agent = FakeAgent([AuthenticationFailed("cannot log in to gpu-box: no key it accepts (ssh-add your key)")])
    connection = make_connection(agent)
    label = ConnectionLabel(connection)
    qtbot.addWidget(label)
    with qtbot.waitSignal(connection.failed, timeout=WAIT_MS) as failed:
        connection.open("gpu-box")
    assert failed.args == ["cannot log in to gpu-box: no key it accepts (ssh-add your key)"]
    assert connection.state == FAILED and label.text() == "gpu-box · not connected"
    assert "no key it accepts" in label.toolTip()
    qtbot.wait(300)
    assert len(agent.links) == 1  # nothing is retried behind the user's back


def test_a_version_mismatch_is_its_own_message(qtbot, make_connection):
    text = "install the same gpu-train-monitor version on both machines: here 1.0, on gpu-box 2.0"
    connection = make_connection(FakeAgent([VersionMismatch(text)]))
    with qtbot.waitSignal(connection.failed, timeout=WAIT_MS) as failed:
        connection.open("gpu-box")
    assert failed.args == [text]


def test_a_dropped_connection_says_reconnecting_and_comes_back_by_itself(qtbot, make_connection, monkeypatch):
    from gpu_train_monitor.gui.remote import link_loop

    monkeypatch.setattr(link_loop, "BACKOFF_S", (0.05, 0.1))
    agent = FakeAgent()
    connection = make_connection(agent)
    connection.open("gpu-box")
    qtbot.waitUntil(lambda: connection.is_connected, timeout=WAIT_MS)
    label = ConnectionLabel(connection)
    qtbot.addWidget(label)
    agent.attempts = [ConnectionLost("the connection to gpu-box was lost")]  # the first try again fails too
    states: list[str] = []
    connection.state_changed.connect(states.append)
    with qtbot.waitSignal(connection.lost, timeout=WAIT_MS):
        agent.links[0].drop()
    assert connection.state == RECONNECTING and label.text() == "gpu-box · reconnecting…"
    qtbot.waitUntil(lambda: connection.is_connected, timeout=WAIT_MS)
    assert states[0] == RECONNECTING and states[-1] == CONNECTED
    assert len(agent.links) == 3 and agent.links[0].closed  # the dropped link, one failed try, the new one
    qtbot.waitUntil(lambda: label.text() == "gpu-box · 23 ms", timeout=WAIT_MS)


def test_the_watched_devices_readings_arrive_on_the_gui_thread(qtbot, make_connection):
    agent = FakeAgent()
    connection = make_connection(agent)
    connection.watch_device("cuda:0")
    connection.open("gpu-box")
    qtbot.waitUntil(lambda: agent.live is not None and bool(agent.live.streams), timeout=WAIT_MS)
    (_on_data, _on_end, args) = next(iter(agent.live.streams.values()))
    assert args == {"op": "readings", "device": "cuda:0", "interval_s": 1.0}
    threads: list[bool] = []
    connection.reading.connect(lambda data: threads.append(threading.current_thread() is threading.main_thread()))
    with qtbot.waitSignal(connection.reading, timeout=WAIT_MS) as reading:
        threading.Thread(target=agent.live.push_reading, args=(5_000_000,)).start()  # the link's reader thread
    assert reading.args[0]["sample"]["allocated_bytes"] == 5_000_000
    assert threads == [True]
    connection.watch_device(None)  # another device chosen: that stream is cancelled
    qtbot.waitUntil(lambda: not agent.live.streams, timeout=WAIT_MS)


def test_closing_while_connecting_ends_at_once(qtbot, make_connection):
    gate = threading.Event()

    class SlowAgent(FakeAgent):
        def __call__(self, target):
            link = super().__call__(target)
            original = link.connect

            def slow_connect():
                gate.wait(30)  # ssh waiting on an unreachable host; closing the link ends it
                return original()

            link.connect = slow_connect
            link.close = gate.set
            return link

    connection = make_connection(SlowAgent())
    connection.open("gpu-box")
    qtbot.wait(100)
    assert connection.close(2000)
    assert connection.state != CONNECTED


def test_a_host_ssh_would_misread_is_refused_before_anything_starts(make_connection):
    from gpu_train_monitor.base.errors import UserError

    connection = make_connection(FakeAgent())
    with pytest.raises(UserError):
        connection.open("-oProxyCommand=evil")
    assert connection.host is None
