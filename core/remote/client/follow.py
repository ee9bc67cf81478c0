"""Following a remote run into the local store, across dropped connections, until it ends.

The agent streams the run's rows after a cursor (first what was recorded, then live); each chunk is written
into the local store (gpu_train_monitor.remote.client.mirror). After a drop the run on the remote goes on; this side
reconnects (gpu_train_monitor.remote.client.reconnecting) and asks again from the cursor read back from the local
store, so no step is lost and none is written twice.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...base.text import Message
from ...store.run_store import RunStore
from ..wire import compact_rows
from ..wire.protocol import NOT_FOUND, ProtocolError
from .failures import RemoteError, RemoteRequestFailed
from .link import AgentLink
from .mirror import MirrorError, cursor, mirror_chunk
from .reconnecting import ENDED, StreamEnd, StreamSink, follow_across_drops, pump_stream
from .target import RemoteTarget

CLOCK_SKEW_WARN_S = 30.0  # clocks further apart: a mirrored run's heartbeat (the remote's time) misleads here


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
    clocks_checked = False

    def open_link() -> AgentLink:
        link = link_factory(target)
        try:
            link.connect()
        except BaseException:
            link.close()
            raise
        return link

    def follow_once(link: AgentLink) -> StreamEnd:
        nonlocal clocks_checked
        if not clocks_checked:
            clocks_checked = True
            _check_clocks(link, target, problem)
        return _follow(link, uid, store, stop, state, appear_by, target.host)

    def gone(exc: RemoteRequestFailed) -> RemoteError:
        return RunGone(exc.args[0] if exc.args else str(exc))  # the agent's words name the run

    try:
        end = follow_across_drops(
            target.host,
            open_link,
            lambda link: link.close(),
            follow_once,
            gone,
            stop=stop,
            state=state,
            problem=problem,
            first_connection_must_work=True,
        )
        if end is None:
            run_id = store.find_uid(uid)
            return "" if run_id is None else store.run(run_id).status
        reason, why = end
        if reason == NOT_FOUND:  # deleted there while followed
            raise RunGone(why or Message("the run was deleted on {host}", host=target.host))
        if store.find_uid(uid) is None:  # it ended before it recorded anything
            raise RunGone(
                Message(
                    "the run on {host} ended before it recorded anything: {why}", host=target.host, why=why or reason
                )
            )
        state(ENDED)
        return reason
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
) -> StreamEnd:
    """One connection's part: the stream from the local cursor, written as it comes (as copied from `origin`); how
    the stream ended (reason, the agent's words or the link's failure)."""
    decoder = compact_rows.Decoder()

    def open_stream(on_data: StreamSink, on_end: StreamSink) -> int:
        while True:
            after_step, after_seq = cursor(store, uid)
            try:
                return link.stream(
                    "follow",
                    on_data,
                    on_end,
                    uid=uid,
                    after_step=after_step,
                    after_seq=after_seq,
                    rows=compact_rows.MODE,  # a fifth of the bytes of objects
                )
            except RemoteRequestFailed as exc:  # not there yet (started by hand a moment ago): ask again
                if exc.kind != NOT_FOUND or time.monotonic() >= appear_by or stop.is_set():
                    raise
                stop.wait(0.5)

    def write(chunk: dict[str, Any]) -> bool:
        mirror_chunk(store, expanded(chunk, decoder), uid, origin=origin)
        return False  # a run's stream says its end itself

    return pump_stream(link, open_stream, write, stop, state)


def expanded(chunk: dict[str, Any], decoder: compact_rows.Decoder) -> dict[str, Any]:
    """A chunk whose rows came compacted (`"rows": "columns"`) with rows as dicts again, by the stream's
    `decoder` (a fresh one for each `run` reply); MirrorError when its rows do not match their columns."""
    try:
        return decoder.decode(chunk)
    except ProtocolError as exc:
        raise MirrorError(Message("the agent sent a chunk that cannot be read: {error}", error=str(exc))) from None
