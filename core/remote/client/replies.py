"""Who waits for which of the agent's lines: the requests sent and not answered yet, the streams open, and
what ends them all when the link dies. Thread-safe: requests come from any thread, lines from the link's
reader thread. Its own module because routing replies and stream lines (and failing them together) is a job
apart from the connection's handshake and process (gpu_train_monitor.remote.client.link,
gpu_train_monitor.remote.client.transport)."""

from __future__ import annotations

import contextlib
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...base.text import Message
from .failures import ConnectionLost, RemoteError


@dataclass
class Waiting:
    """One request's reply, once it came (or the error that ended the link first)."""

    done: threading.Event = field(default_factory=threading.Event)
    reply: dict[str, Any] | None = None
    error: RemoteError | None = None


@dataclass
class _Stream:
    on_data: Callable[[dict[str, Any]], None]
    on_end: Callable[[str], None]


class Replies:
    """The link's open requests and streams."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[int, Waiting] = {}
        self._streams: dict[int, _Stream] = {}
        self.failure: RemoteError | None = None
        self.end_messages: dict[int, str] = {}  # stream id -> the agent's words on why it ended (when it said)

    def expect(self, request_id: int) -> Waiting:
        """A request about to leave; the link's failure when it is dead already."""
        waiting = Waiting()
        with self._lock:
            if self.failure is not None:
                raise self.failure
            self._waiting[request_id] = waiting
        return waiting

    def forget(self, request_id: int) -> None:
        """A request no longer waited for (it timed out): a late reply is dropped."""
        with self._lock:
            self._waiting.pop(request_id, None)

    def open_stream(
        self, stream_id: int, on_data: Callable[[dict[str, Any]], None], on_end: Callable[[str], None]
    ) -> None:
        with self._lock:
            self._streams[stream_id] = _Stream(on_data, on_end)

    def close_stream(self, stream_id: int) -> bool:
        """Whether the stream was open; its callbacks get nothing more."""
        with self._lock:
            return self._streams.pop(stream_id, None) is not None

    def dispatch(self, message: dict[str, Any]) -> None:
        """Hand one line to the request or stream it belongs to (lines of neither are dropped)."""
        if "stream" in message:
            if not isinstance(message["stream"], int):
                return  # not a stream of ours (a list would not even be a key)
            with self._lock:
                handlers = self._streams.get(message["stream"])
                if handlers is not None and message.get("end"):
                    del self._streams[message["stream"]]
            if handlers is None:
                return  # a cancelled stream's last lines
            try:
                if message.get("end"):
                    if message.get("message"):
                        self.end_messages[message["stream"]] = str(message["message"])
                    handlers.on_end(str(message.get("reason", "")))
                elif isinstance(message.get("data"), dict):
                    handlers.on_data(message["data"])
            except Exception as exc:  # a receiver's bug: the link fails loudly, never a reader thread gone silent
                traceback.print_exc(file=sys.stderr)
                raise ConnectionLost(
                    Message("a receiver of the agent's lines failed: {error}", error=f"{type(exc).__name__}: {exc}")
                ) from None
            return
        with self._lock:
            waiting = self._waiting.pop(message["id"], None) if isinstance(message.get("id"), int) else None
        if waiting is not None:
            waiting.reply = message
            waiting.done.set()

    def fail(self, error: RemoteError, reason: str) -> None:
        """The link is dead: every waiting request gets `error` (the first failure), every stream ends with
        `reason`."""
        with self._lock:
            if self.failure is None:
                self.failure = error
            waiting, self._waiting = self._waiting, {}
            streams, self._streams = self._streams, {}
        for entry in waiting.values():
            entry.error = self.failure
            entry.done.set()
        for handlers in streams.values():
            with contextlib.suppress(Exception):  # a callback's bug must not keep the others from their end
                handlers.on_end(reason)
