"""Following a stream from the agent across dropped connections: the loop a followed run
(gpu_train_monitor.remote.client.follow) and a followed job's journal (gpu_train_monitor.remote.client.journal_follow)
share, so both reconnect, resume, ping and give up alike.

When the link drops (a laptop's Wi-Fi, a sleeping lid, a killed ssh), the work on the remote goes on; this side says
"reconnecting", waits with back-off (1, 2, 4 .. 30 s) and asks again from what it holds, so nothing is handled twice
or missed. A link that stays silent is pinged: one that does not answer is treated as dropped (ssh's own keep-alive
would notice too, later). Failures no retry can mend (authentication, unknown host, a missing agent, another
version) end the follow at once with their message. The callers say what differs: how to get a connection, what to
ask for from what they hold, and what to do with each chunk.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from ...base.text import Message
from ..wire.protocol import NOT_FOUND
from .failures import (
    AgentMissing,
    AuthenticationFailed,
    HostKeyNotTrusted,
    RemoteError,
    RemoteRequestFailed,
    UnknownHost,
    VersionMismatch,
)
from .link import LINK_CLOSED, LINK_LOST, AgentLink

CONNECTING = "connecting"
FOLLOWING = "following"
RECONNECTING = "reconnecting"
ENDED = "ended"
FINISHED = "finished"  # a stream whose chunk said it was the last: cancelled here, ended for good
BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)  # waits between attempts after a drop; the last repeats
PING_AFTER_S = 5.0  # a link silent this long is pinged
PING_TIMEOUT_S = 10.0
AGAIN = (LINK_LOST, LINK_CLOSED, "cancelled", "error")  # stream ends that a new connection resumes from
LASTING = (AuthenticationFailed, UnknownHost, HostKeyNotTrusted, AgentMissing, VersionMismatch)  # no retry mends

StreamEnd = tuple[str, str]  # how a stream ended (its reason) and the agent's words or the link's failure
StreamSink = Callable[[Any], None]  # what a stream's data or its end is handed to
OpenStream = Callable[[StreamSink, StreamSink], int]  # asks for the stream (data sink, end sink); its id
ChunkHandler = Callable[[Any], bool]  # handles one chunk; True when it was the stream's last


def backoff_s(attempt: int, steps: tuple[float, ...] = BACKOFF_S) -> float:
    """The wait before reconnection attempt `attempt` (0 first): doubling, at most the last step (the window's
    connection waits the same)."""
    return steps[min(attempt, len(steps) - 1)]


def wait_to_reconnect(
    attempt: int,
    why: str,
    host: str,
    stop: threading.Event,
    state: Callable[[str], None],
    problem: Callable[[str], None],
) -> None:
    """After a drop (`why`, or nothing said): say when the next attempt comes, then wait for it (or for `stop`)."""
    delay = backoff_s(attempt)
    problem(
        Message(
            "{why}; reconnecting in {seconds:g} s",
            why=why or Message("the connection to {host} dropped", host=host),
            seconds=delay,
        )
    )
    state(RECONNECTING)
    stop.wait(delay)


def follow_across_drops(
    host: str,
    open_link: Callable[[], AgentLink],
    release_link: Callable[[AgentLink], None],
    follow_once: Callable[[AgentLink], StreamEnd],
    gone: Callable[[RemoteRequestFailed], RemoteError],
    *,
    stop: threading.Event,
    state: Callable[[str], None],
    problem: Callable[[str], None],
    first_connection_must_work: bool,
) -> StreamEnd | None:
    """Connect (`open_link`), follow one connection's part (`follow_once`, resuming from what the caller holds),
    and after a drop wait and do it again, until the stream ends for good: its end, or None when `stop` was set
    first. Raises a lasting RemoteError at once, `gone(failure)` when the agent does not know what was asked for,
    and, with `first_connection_must_work`, the failure of the first connection."""
    attempt, first = 0, True
    while not stop.is_set():
        state(CONNECTING if first else RECONNECTING)
        connected = not first
        first = False
        link: AgentLink | None = None
        try:
            link = open_link()
            connected, attempt = True, 0
            reason, why = follow_once(link)
        except LASTING:
            raise
        except RemoteRequestFailed as exc:
            if exc.kind != NOT_FOUND:
                raise
            raise gone(exc) from None
        except RemoteError as exc:
            if first_connection_must_work and not connected:
                raise
            reason, why = LINK_LOST, str(exc)
        finally:
            if link is not None:
                release_link(link)
        if reason not in AGAIN:
            return reason, why
        if stop.is_set():
            break
        wait_to_reconnect(attempt, why, host, stop, state, problem)
        attempt += 1
    return None


def pump_stream(
    link: AgentLink,
    open_stream: OpenStream,
    on_chunk: ChunkHandler,
    stop: threading.Event,
    state: Callable[[str], None],
) -> StreamEnd:
    """One connection's part: open the stream, hand each chunk to `on_chunk` as it comes, ping a link gone quiet
    (a RemoteError when it does not answer: a drop), and cancel it when `stop` is set; how the stream ended."""
    lines: queue.Queue[tuple[str, Any]] = queue.Queue()
    stream = open_stream(lambda data: lines.put(("data", data)), lambda reason: lines.put(("end", reason)))
    state(FOLLOWING)
    quiet_since = time.monotonic()
    while True:
        try:
            kind, value = lines.get(timeout=0.25)
        except queue.Empty:
            if stop.is_set():
                link.cancel(stream)
                return LINK_CLOSED, ""
            if time.monotonic() - quiet_since > PING_AFTER_S:
                link.ping(PING_TIMEOUT_S)
                quiet_since = time.monotonic()
            continue
        quiet_since = time.monotonic()
        if kind == "end":
            return str(value), link.end_messages.get(stream, "") or str(link.failure or "")
        if on_chunk(value):
            link.cancel(stream)
            return FINISHED, ""
