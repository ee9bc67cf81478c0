"""The connection's work off the GUI thread: connect (ssh, the agent's hello, its devices), then ping every few
seconds (the latency) and stream the chosen device's readings, and when the link drops, connect again with
back-off (1, 2, 4 .. 30 s) until told to stop. A first connection that fails is not retried: the user is told
why (no key, unknown host, no agent there, another version) and asked again.

Everything it learns goes out through `report(kind, value)`, called in this thread or the link's reader thread
(a Qt signal's emit: the window's slots receive it on the GUI thread). No Qt here, no widgets.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from gpu_train_monitor.remote.client.reconnecting import BACKOFF_S, backoff_s

PING_INTERVAL_S = 2.0
READINGS_INTERVAL_S = 1.0

Report = Callable[[str, Any], None]


class LinkLoop:
    """Owns one `AgentLink` at a time (`make_link()` builds a fresh one per attempt; `describe(error)` says a
    failure in one line). `wanted_device` (set from the GUI thread, then `wake`) is the spec whose readings to
    stream, None for none."""

    def __init__(
        self,
        make_link: Callable[[], Any],
        describe: Callable[[BaseException], str],
        ping_interval_s: float = PING_INTERVAL_S,
        backoff: tuple[float, ...] | None = None,
    ) -> None:
        self._make_link, self._describe = make_link, describe
        self._report: Report = lambda kind, value: None
        self._cancelled: Callable[[], bool] = lambda: False
        self.ping_interval_s, self.backoff = ping_interval_s, backoff
        self.wanted_device: str | None = None
        self.wake = threading.Event()
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._link: Any = None

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set() or self._cancelled()

    def stop(self) -> None:
        """From any thread: end the loop soon; a blocking call on the link ends as the link is closed."""
        self._stopped.set()
        self.wake.set()
        with self._lock:
            link = self._link
        if link is not None:
            _close_quietly(link)

    def run(self, report: Report, cancelled: Callable[[], bool] = lambda: False) -> None:
        """Connect, serve, reconnect until stopped (or `cancelled()`); news goes to `report(kind, value)`."""
        from gpu_train_monitor.remote.client.link import RemoteError

        self._report, self._cancelled = report, cancelled

        attempt, ever = 0, False
        while not self.stopped:
            self._report("state", "reconnecting" if ever else "connecting")
            link = self._make_link()
            with self._lock:
                self._link = link
            try:
                if self.stopped:
                    return
                hello = link.connect()
                listed = link.request("devices").get("devices", [])
            except RemoteError as exc:
                _close_quietly(link)
                if self.stopped:
                    return
                if not ever:
                    self._report("failed", self._describe(exc))
                    return
                self._report("lost", self._describe(exc))
                if self._pause(backoff_s(attempt, self._backoff())):
                    return
                attempt += 1
                continue
            ever, attempt = True, 0
            self._report("connected", (dict(hello), list(listed)))
            try:
                self._serve(link)
            except RemoteError as exc:
                if not self.stopped:
                    self._report("lost", self._describe(exc))
            finally:
                _close_quietly(link)
                with self._lock:
                    self._link = None
            if self.stopped or self._pause(backoff_s(0, self._backoff())):
                return
        self._report("state", "closed")

    def _serve(self, link: Any) -> None:
        """Ping and stream readings until stopped; RemoteError once the link drops."""
        streamed: str | None = None
        stream_id: int | None = None
        while not self.stopped:
            wanted = self.wanted_device
            if wanted != streamed:
                if stream_id is not None:
                    link.cancel(stream_id)
                    stream_id = None
                if wanted is not None:
                    stream_id = link.stream(
                        "readings",
                        self._on_reading,
                        self._on_readings_end,
                        device=wanted,
                        interval_s=READINGS_INTERVAL_S,
                    )
                streamed = wanted
            self._report("latency", link.ping())
            if self._pause(self.ping_interval_s):
                return

    def _backoff(self) -> tuple[float, ...]:
        return self.backoff if self.backoff is not None else BACKOFF_S  # read when waiting: tests shorten it

    def _on_reading(self, data: Mapping[str, Any]) -> None:
        self._report("reading", dict(data))

    def _on_readings_end(self, reason: str) -> None:
        self._report("readings_end", str(reason))

    def _pause(self, seconds: float) -> bool:
        """Wait `seconds` or until woken; True when the loop is to stop."""
        deadline = time.monotonic() + seconds
        while not self.stopped:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if self.wake.wait(min(left, 0.2)):
                self.wake.clear()
                return self.stopped  # woken: a new device to stream, or the end
        return True


def _close_quietly(link: Any) -> None:
    try:
        link.close()
    except Exception:  # noqa: BLE001 - closing a link that is gone already
        pass
