"""Following a remote run into the local store, across dropped connections, until it ends.

The agent streams the run's rows after a cursor (first what was recorded, then live); each chunk is written
into the local store (gpu_train_monitor.remote.client.mirror). When the link drops (a laptop's Wi-Fi, a sleeping lid, a
killed ssh), the run on the remote goes on; this side reconnects with back-off (1, 2, 4 .. 30 s) and asks again
from the cursor read back from the local store, so no step is lost and none is written twice. A link that
stays silent is pinged: one that does not answer is treated as dropped (ssh's own keep-alive would notice
too, later). Failures no retry can mend (authentication, unknown host, a missing agent, another version)
end the follow at once with their message.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...base.text import Message
from ...store.run_store import RunStore
from ..wire import compact_rows
from ..wire.protocol import NOT_FOUND, ProtocolError
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
from .mirror import MirrorError, cursor, mirror_chunk
from .target import RemoteTarget

CONNECTING = "connecting"
FOLLOWING = "following"
RECONNECTING = "reconnecting"
ENDED = "ended"
BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)  # waits between attempts after a drop; the last repeats
PING_AFTER_S = 5.0  # a link silent this long is pinged
PING_TIMEOUT_S = 10.0
AGAIN = (LINK_LOST, LINK_CLOSED, "cancelled", "error")  # stream ends that a new connection resumes from
CLOCK_SKEW_WARN_S = 30.0  # clocks further apart: a mirrored run's heartbeat (the remote's time) misleads here
LASTING = (AuthenticationFailed, UnknownHost, HostKeyNotTrusted, AgentMissing, VersionMismatch)  # no retry mends


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


class RunGone(RemoteError):
    """The followed run is not on the remote (any more), or ended there before it recorded anything: unlike a
    failed connection, nothing goes on there."""


def follow_into_store(
    target: RemoteTarget,
    uid: str,
    store_path: Path | str | None,
    *,
    stop: threading.Event,
    on_state: Callable[[str], None] | None = None,
    on_problem: Callable[[str], None] | None = None,
    wait_for_run_s: float = 0.0,
    link_factory: Callable[[RemoteTarget], AgentLink] = AgentLink,
) -> str:
    """Mirror run `uid` of `target` into the store at `store_path` until it ends; returns its final status
    (the run's status in the local store when `stop` ended the follow first). `on_state` hears CONNECTING,
    FOLLOWING, RECONNECTING, ENDED; `on_problem` one line per drop or failed attempt. A run the remote does
    not know yet is asked for again for up to `wait_for_run_s` (the agent itself waits for the runs it
    started). Raises RemoteError when the first connection fails, for a lasting failure later, for a run
    that is not there, or one that ended before it recorded anything (RunGone, with the agent's reason)."""
    state = on_state or (lambda _: None)
    problem = on_problem or (lambda _: None)
    store = RunStore(store_path)
    appear_by = time.monotonic() + wait_for_run_s
    attempt, connected_once, clocks_checked = 0, False, False
    try:
        while not stop.is_set():
            state(RECONNECTING if connected_once else CONNECTING)
            link = link_factory(target)
            try:
                link.connect()
                connected_once, attempt = True, 0
                if not clocks_checked:
                    clocks_checked = True
                    _check_clocks(link, target, problem)
                reason, why = _follow(link, uid, store, stop, state, appear_by, target.host)
            except LASTING:
                raise
            except RemoteRequestFailed as exc:
                if exc.kind != NOT_FOUND:
                    raise
                raise RunGone(exc.args[0] if exc.args else str(exc)) from None  # the agent's words name the run
            except RemoteError as exc:
                if not connected_once:
                    raise
                reason, why = LINK_LOST, str(exc)
            finally:
                link.close()
            if reason == NOT_FOUND:  # deleted there while followed
                raise RunGone(why or Message("the run was deleted on {host}", host=target.host))
            if reason not in AGAIN:
                if store.find_uid(uid) is None:  # it ended before it recorded anything
                    raise RunGone(
                        Message(
                            "the run on {host} ended before it recorded anything: {why}",
                            host=target.host,
                            why=why or reason,
                        )
                    )
                state(ENDED)
                return reason
            if stop.is_set():
                break
            wait_to_reconnect(attempt, why, target.host, stop, state, problem)
            attempt += 1
        run_id = store.find_uid(uid)
        return "" if run_id is None else store.run(run_id).status
    finally:
        store.close()


def _check_clocks(link: AgentLink, target: RemoteTarget, problem: Callable[[str], None]) -> None:
    """Say so when the two machines' clocks disagree by more than CLOCK_SKEW_WARN_S: the copy here keeps the
    remote's times, and this machine judges a run on another host alive while its heartbeat is recent by its own
    clock (gpu_train_monitor.store.run_store.process_alive), so a live run could look interrupted here."""
    before = time.time()
    at = link.request("ping").get("at")
    after = time.time()
    if not isinstance(at, (int, float)) or isinstance(at, bool):
        return
    skew = (before + after) / 2 - at
    if abs(skew) > CLOCK_SKEW_WARN_S:
        problem(
            Message(
                "warning: the clocks of this machine and {host} differ by {seconds:.0f} s, so a run followed from "
                "there can look interrupted here; let both machines set their clocks by NTP",
                host=target.host,
                seconds=abs(skew),
            )
        )


def _follow(
    link: AgentLink,
    uid: str,
    store: RunStore,
    stop: threading.Event,
    state: Callable[[str], None],
    appear_by: float,
    origin: str,
) -> tuple[str, str]:
    """One connection's part: the stream from the local cursor, written as it comes (as copied from `origin`); how
    the stream ended (reason, the agent's words or the link's failure)."""
    lines: queue.Queue[tuple[str, Any]] = queue.Queue()
    while True:
        after_step, after_seq = cursor(store, uid)
        try:
            stream = link.stream(
                "follow",
                lambda data: lines.put(("data", data)),
                lambda reason: lines.put(("end", reason)),
                uid=uid,
                after_step=after_step,
                after_seq=after_seq,
                rows=compact_rows.MODE,  # a fifth of the bytes of objects
            )
            break
        except RemoteRequestFailed as exc:  # not there yet (started by hand a moment ago): ask again
            if exc.kind != NOT_FOUND or time.monotonic() >= appear_by or stop.is_set():
                raise
            stop.wait(0.5)
    state(FOLLOWING)
    decoder = compact_rows.Decoder()
    quiet_since = time.monotonic()
    while True:
        try:
            kind, value = lines.get(timeout=0.25)
        except queue.Empty:
            if stop.is_set():
                link.cancel(stream)
                return LINK_CLOSED, ""
            if time.monotonic() - quiet_since > PING_AFTER_S:
                link.ping(PING_TIMEOUT_S)  # RemoteError: treated as a drop by the caller
                quiet_since = time.monotonic()
            continue
        quiet_since = time.monotonic()
        if kind == "end":
            return str(value), link.end_messages.get(stream, "") or str(link.failure or "")
        mirror_chunk(store, expanded(value, decoder), uid, origin=origin)


def expanded(chunk: dict[str, Any], decoder: compact_rows.Decoder) -> dict[str, Any]:
    """A chunk whose rows came compacted (`"rows": "columns"`) with rows as dicts again, by the stream's
    `decoder` (a fresh one for each `run` reply); MirrorError when its rows do not match their columns."""
    try:
        return decoder.decode(chunk)
    except ProtocolError as exc:
        raise MirrorError(Message("the agent sent a chunk that cannot be read: {error}", error=str(exc))) from None
