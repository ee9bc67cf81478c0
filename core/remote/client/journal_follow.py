"""A job on another machine (a comparison or a batch-size search, gpu_train_monitor.remote.agent.job_ops): starting it,
steering it, and following its journal to the end across dropped connections.

The journal is a list of lines; this side holds how many it has handled and, after a drop, asks again from there
(reconnecting with gpu_train_monitor.remote.client.follow's back-off), so no line is handled twice or missed while the
job goes on there. Failures no retry mends (authentication, an unknown host, a missing agent, another version) end the
follow at once, as they end a followed run's.
"""

from __future__ import annotations

import base64
import contextlib
import json
import queue
import threading
import time
import zlib
from collections.abc import Callable
from typing import Any

from ...base.text import Message
from ..wire.protocol import MAX_REPLY_BYTES, NOT_FOUND
from .failures import RemoteError, RemoteRequestFailed
from .follow import (
    AGAIN,
    CONNECTING,
    ENDED,
    FOLLOWING,
    LASTING,
    PING_AFTER_S,
    PING_TIMEOUT_S,
    RECONNECTING,
    wait_to_reconnect,
)
from .link import LINK_CLOSED, LINK_LOST, AgentLink
from .target import RemoteTarget

MAX_INFLATED = 4 * MAX_REPLY_BYTES  # what one data may inflate to: a chunk of lines, never a bomb
LineHandler = Callable[[dict[str, Any], tuple[int, float, str]], None]  # a journal line, the job's owner


class JobHandle:
    """One job on `target`: started by `start`, steered by `control`; holds the start's connection for the
    follow's first part (one ssh login, not two)."""

    def __init__(self, target: RemoteTarget, link_factory: Callable[[RemoteTarget], AgentLink] = AgentLink) -> None:
        self.target, self.link_factory = target, link_factory
        self.uid = ""
        self.owner: tuple[int, float, str] = (0, 0.0, "")  # the job's pid, its create time, its host's name
        self._link: AgentLink | None = None
        self._lock = threading.Lock()
        self._pending: list[str] = []  # controls asked for before the job had started

    def connect(self) -> AgentLink:
        link = self.link_factory(self.target)
        link.connect()
        with self._lock:
            self._link = link
        return link

    def start(self, op: str, **args: Any) -> str:
        """Start the job (`compare` or `find`); its uid. RemoteError when the machine cannot be reached, a
        RemoteRequestFailed with the agent's one line for input it refused."""
        link = self.connect()
        try:
            reply = link.request(op, **args)
        except BaseException:
            self.release(link)
            raise
        pid, started_at = int(reply.get("pid") or 0), float(reply.get("started_at") or 0.0)
        host = str(link.hello.get("host") or link.host_name or self.target.host)
        with self._lock:
            self.uid, self.owner = str(reply["uid"]), (pid, started_at, host)
            pending, self._pending = self._pending, []
        for word in pending:
            self.control(word)
        return self.uid

    def take_link(self) -> AgentLink:
        """The live connection (the start's, the first time), else a new one."""
        with self._lock:
            link = self._link
        return link if link is not None and link.alive else self.connect()

    def release(self, link: AgentLink) -> None:
        with self._lock:
            if self._link is link:
                self._link = None
        link.close()

    def control(self, word: str) -> None:
        """Send `word` (stop, pause, clear_cache) to the job; quietly nothing once it has ended or the machine
        cannot be reached (the follow says so)."""
        with self._lock:
            if not self.uid:
                self._pending.append(word)
                return
            link = self._link
        own = link is None or not link.alive
        with contextlib.suppress(RemoteError):
            if own:
                link = self.link_factory(self.target)
                link.connect()
            assert link is not None
            try:
                link.request("control", uid=self.uid, control=word)
            finally:
                if own:
                    link.close()

    def control_soon(self, word: str) -> None:
        """`control` on a thread of its own: a window's button never waits for a connection."""
        threading.Thread(target=self.control, args=(word,), name=f"job-{word}", daemon=True).start()


def follow_journal(
    job: JobHandle,
    on_line: LineHandler,
    *,
    stop: threading.Event,
    on_state: Callable[[str], None] | None = None,
    on_problem: Callable[[str], None] | None = None,
) -> dict[str, Any] | None:
    """Hand each journal line but the last to `on_line`, in order, once; return the last line's `end` object, or
    None when `stop` was set first (the job goes on there). Raises a lasting RemoteError at once, and a RemoteError
    for a job that ended there without its last line (killed: the agent's words say how)."""
    state = on_state or (lambda _: None)
    problem = on_problem or (lambda _: None)
    held = [0]
    attempt = 0
    while not stop.is_set():
        state(RECONNECTING if held[0] or attempt else CONNECTING)
        link: AgentLink | None = None
        try:
            link = job.take_link()
            attempt = 0
            reason, why, end = _follow_once(link, job, held, on_line, stop, state)
        except LASTING:
            raise
        except RemoteRequestFailed as exc:
            if exc.kind == NOT_FOUND:
                raise RemoteError(Message("the job is gone on {host}: {why}", host=job.target.host, why=str(exc)))
            raise
        except RemoteError as exc:
            reason, why, end = LINK_LOST, str(exc), None
        finally:
            if link is not None:
                job.release(link)
        if end is not None:
            state(ENDED)
            return end
        if reason not in AGAIN:
            raise RemoteError(
                Message("the job on {host} ended without finishing: {why}", host=job.target.host, why=why or reason)
            )
        if stop.is_set():
            break
        wait_to_reconnect(attempt, why, job.target.host, stop, state, problem)
        attempt += 1
    return None


def _follow_once(
    link: AgentLink,
    job: JobHandle,
    held: list[int],
    on_line: LineHandler,
    stop: threading.Event,
    state: Callable[[str], None],
) -> tuple[str, str, dict[str, Any] | None]:
    """One connection's part: the journal from line `held[0]` on; how the stream ended and the end, if it came."""
    lines: queue.Queue[tuple[str, Any]] = queue.Queue()
    stream = link.stream(
        "journal",
        lambda data: lines.put(("data", data)),
        lambda reason: lines.put(("end", reason)),
        uid=job.uid,
        after=held[0],
        encoding="deflate",  # a fifth of the bytes: the lines repeat each other's keys
    )
    inflate = zlib.decompressobj()
    state(FOLLOWING)
    quiet_since = time.monotonic()
    while True:
        try:
            kind, value = lines.get(timeout=0.25)
        except queue.Empty:
            if stop.is_set():
                link.cancel(stream)
                return LINK_CLOSED, "", None
            if time.monotonic() - quiet_since > PING_AFTER_S:
                link.ping(PING_TIMEOUT_S)  # RemoteError: a drop
                quiet_since = time.monotonic()
            continue
        quiet_since = time.monotonic()
        if kind == "end":
            return str(value), link.end_messages.get(stream, "") or str(link.failure or ""), None
        for line in _lines(value, inflate):
            held[0] += 1
            if isinstance(line, dict) and isinstance(line.get("end"), dict):
                link.cancel(stream)
                return "finished", "", line["end"]
            if isinstance(line, dict):
                on_line(line, job.owner)


def _lines(data: dict[str, Any], inflate: Any) -> list[Any]:
    """A data's journal lines: as they came, or inflated from `"z"` (the stream's one deflate stream, in order)."""
    if "z" not in data:
        lines = data.get("lines", [])
        return lines if isinstance(lines, list) else []
    try:
        text = inflate.decompress(base64.b64decode(data["z"], validate=True), MAX_INFLATED)
        if inflate.unconsumed_tail:
            raise ValueError("more than a reply may hold")
        lines = json.loads(text)
    except (ValueError, TypeError, zlib.error) as exc:
        raise RemoteError(Message("the agent sent journal lines that cannot be read: {why}", why=str(exc))) from None
    return lines if isinstance(lines, list) else []
