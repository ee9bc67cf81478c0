"""The window's connection to one remote machine: `open(host, agent_command)` starts a `LinkLoop` in a QThread of
its own (`gpu_train_monitor.gui.qt.background.BackgroundTask`), so connecting (seconds over SSH), pinging and reading
never block the window; what it learns arrives here on the GUI thread and goes out as signals: the state ("connecting",
"connected", "reconnecting", "failed", "closed"), the agent's devices once connected, the latency of each
ping, the readings of the device being watched. `close()` ends it within a moment (the link is closed under
any blocking call).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Signal, Slot

from gpu_train_monitor.base.text import Message
from gpu_train_monitor.gui.qt.background import BackgroundTask
from gpu_train_monitor.gui.qt.core_text import error_text
from gpu_train_monitor.gui.remote.devices import RemoteDevice, remote_devices
from gpu_train_monitor.gui.remote.link_loop import PING_INTERVAL_S, LinkLoop

CLOSE_WAIT_MS = 5000

CONNECTING, CONNECTED, RECONNECTING, FAILED, CLOSED = "connecting", "connected", "reconnecting", "failed", "closed"


@dataclass(frozen=True)
class Connected:
    """What the agent told on connecting: `host` as typed, `host_name` as that machine calls itself."""

    host: str
    host_name: str
    app: str
    devices: tuple[RemoteDevice, ...]


def connection_problem(error: BaseException) -> str:
    """Why connecting failed or the link dropped, one line in the user's language; the agent missing there is said
    in the window's words (its Agent command field, where the CLI's message names its option)."""
    from gpu_train_monitor.base.text import message_of
    from gpu_train_monitor.remote.client.failures import AgentMissing

    message = message_of(error)
    if isinstance(error, AgentMissing) and isinstance(message, Message) and "host" in message.params:
        return QCoreApplication.translate(
            "RemoteConnection",
            "gpu-train-monitor is not installed on {host} (its shell could not run `{command}`): install it there "
            "(pip install . in a clone of the project), or name the command that runs it as the Agent command of "
            "File ▸ Connect to a machine…, e.g. ~/venv/bin/gpu-train-monitor agent",
        ).format(host=message.params["host"], command=message.params.get("command", ""))
    return error_text(error)


def make_target(host: str, agent_command: str = "") -> Any:
    """The `gpu_train_monitor.remote.client.target.RemoteTarget` for `host` (an ssh alias, user@host or user@host:port)
    running `agent_command` there (empty: the default); UserError for input that names no host."""
    from gpu_train_monitor.remote.client.target import RemoteTarget

    return RemoteTarget.parse(host.strip(), agent_command.strip() or None)


def default_link(target: Any) -> Any:
    from gpu_train_monitor.remote.client.link import AgentLink

    return AgentLink(target)


class RemoteConnection(QObject):
    """At most one machine at a time; `host` is the one asked for (None: not connected, nor trying)."""

    state_changed = Signal(str)
    connected = Signal(object)  # Connected, each time a link is up (after a reconnection too)
    failed = Signal(str)  # the first connection failed: why, one line in the user's language
    lost = Signal(str)  # a connection dropped (the window reconnects): why
    latency_measured = Signal(float)  # seconds
    reading = Signal(object)  # a `readings` stream line's data (dict)

    def __init__(
        self,
        parent: QObject | None = None,
        link_factory: Callable[[Any], Any] = default_link,
        ping_interval_s: float = PING_INTERVAL_S,
    ) -> None:
        super().__init__(parent)
        self._link_factory, self._ping_interval_s = link_factory, ping_interval_s
        self.host: str | None = None
        self.agent_command = ""
        self.target: Any = None
        self.state = CLOSED
        self.info: Connected | None = None  # the last connection's, kept while reconnecting
        self.latency_s: float | None = None
        self.problem = ""  # why the last connection failed or dropped
        self._loop: LinkLoop | None = None
        self._watched: str | None = None
        self._task = BackgroundTask(self, thread_name="remote")
        self._task.progress.connect(self._on_report)
        self._task.failed.connect(self._on_crash)
        self._task.ended.connect(self._on_ended)

    @property
    def is_connected(self) -> bool:
        return self.state == CONNECTED

    @property
    def active(self) -> bool:
        """Connected, connecting or reconnecting."""
        return self.state in (CONNECTING, CONNECTED, RECONNECTING)

    def open(self, host: str, agent_command: str = "") -> None:
        """Connect to `host` (closing the machine connected before); UserError, before anything starts, for a
        host that cannot be parsed."""
        target = make_target(host, agent_command)
        self.close()
        self.host, self.agent_command, self.target = host.strip(), agent_command.strip(), target
        self.info, self.latency_s, self.problem = None, None, ""
        self._set_state(CONNECTING)
        factory = self._link_factory
        loop = LinkLoop(lambda: factory(target), connection_problem, self._ping_interval_s)
        loop.wanted_device = self._watched
        self._loop = loop
        self._task.start(lambda report, cancelled: loop.run(lambda kind, value: report((kind, value)), cancelled))

    def watch_device(self, spec: str | None) -> None:
        """Stream the readings of the remote device `spec` (None: none) while connected."""
        self._watched = spec
        if self._loop is not None:
            self._loop.wanted_device = spec
            self._loop.wake.set()

    def close(self, timeout_ms: int = CLOSE_WAIT_MS) -> bool:
        """Disconnect; True when the connection's thread has ended."""
        if self._loop is not None:
            self._loop.stop()
        ended = self._task.shutdown(timeout_ms)
        self._loop = None
        if self.host is not None and self.state != FAILED:
            self._set_state(CLOSED)
        return ended

    def forget(self) -> None:
        """Disconnect and forget the host (File ▸ Disconnect)."""
        self.close()
        self.host, self.info, self.latency_s = None, None, None
        self.state = CLOSED
        self.state_changed.emit(CLOSED)  # closed with no host now: the status bar lets it go

    # ---- what the loop reports (GUI thread) --------------------------------------------------------
    @Slot(object)
    def _on_report(self, value: object) -> None:
        if self._loop is None or not isinstance(value, tuple):  # closed meanwhile: late news
            return
        kind, data = value
        if kind == "state":
            self._set_state(str(data))
        elif kind == "connected":
            hello, listed = data
            host_name = str(hello.get("host") or self.host)
            devices = remote_devices(self.host or host_name, host_name, listed)
            self.info = Connected(self.host or host_name, host_name, str(hello.get("app") or ""), devices)
            self.problem = ""
            self._set_state(CONNECTED)
            self.connected.emit(self.info)
        elif kind == "failed":
            self.problem = str(data)
            self._set_state(FAILED)
            self.failed.emit(self.problem)
        elif kind == "lost":
            self.problem, self.latency_s = str(data), None
            self._set_state(RECONNECTING)
            self.lost.emit(self.problem)
        elif kind == "latency":
            self.latency_s = float(data)
            self.latency_measured.emit(self.latency_s)
        elif kind == "reading" and isinstance(data, dict) and data.get("device") == self._watched:
            self.reading.emit({**data, "received_at": time.monotonic()})

    @Slot(str)
    def _on_crash(self, message: str) -> None:
        """An unexpected error ended the loop: one line, never a traceback in the window."""
        self.problem = message.splitlines()[0] if message else ""
        self._set_state(FAILED)
        self.failed.emit(self.problem)

    @Slot()
    def _on_ended(self) -> None:
        if self.state not in (FAILED, CLOSED) and self._loop is None:
            self._set_state(CLOSED)

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.state_changed.emit(state)
