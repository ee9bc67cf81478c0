"""A job on another machine (a comparison or a batch-size search, gpu_train_monitor.remote.agent.job_ops): starting it,
steering it, and following its journal to the end across dropped connections.

The journal is a list of lines; this side holds how many it has handled and, after a drop, asks again from there
(reconnecting as a followed run does: gpu_train_monitor.remote.client.reconnecting), so no line is handled twice or
missed while the job goes on there. Failures no retry mends (authentication, an unknown host, a missing agent, another
version) end the follow at once, as they end a followed run's.
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import zlib
from collections.abc import Callable
from typing import Any

from ...base.text import Message
from ..wire.protocol import MAX_REPLY_BYTES
from .failures import RemoteError, RemoteRequestFailed
from .link import AgentLink
from .reconnecting import ENDED, StreamEnd, StreamSink, follow_across_drops, pump_stream
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
    last: list[dict[str, Any]] = []  # the last line's end, once it came

    def gone(exc: RemoteRequestFailed) -> RemoteError:
        return RemoteError(Message("the job is gone on {host}: {why}", host=job.target.host, why=str(exc)))

    end = follow_across_drops(
        job.target.host,
        job.take_link,
        job.release,
        lambda link: _follow_once(link, job, held, on_line, last, stop, state),
        gone,
        stop=stop,
        state=state,
        problem=problem,
        first_connection_must_work=False,
    )
    if end is None:
        return None
    if last:
        state(ENDED)
        return last[0]
    reason, why = end
    raise RemoteError(
        Message("the job on {host} ended without finishing: {why}", host=job.target.host, why=why or reason)
    )


def _follow_once(
    link: AgentLink,
    job: JobHandle,
    held: list[int],
    on_line: LineHandler,
    last: list[dict[str, Any]],
    stop: threading.Event,
    state: Callable[[str], None],
) -> StreamEnd:
    """One connection's part: the journal from line `held[0]` on; how the stream ended (its last line's end is put
    in `last`)."""
    inflate = zlib.decompressobj()

    def open_stream(on_data: StreamSink, on_end: StreamSink) -> int:
        return link.stream(
            "journal",
            on_data,
            on_end,
            uid=job.uid,
            after=held[0],
            encoding="deflate",  # a fifth of the bytes: the lines repeat each other's keys
        )

    def handle(data: dict[str, Any]) -> bool:
        for line in _lines(data, inflate):
            held[0] += 1
            if isinstance(line, dict) and isinstance(line.get("end"), dict):
                last.append(line["end"])
                return True
            if isinstance(line, dict):
                on_line(line, job.owner)
        return False

    return pump_stream(link, open_stream, handle, stop, state)


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
