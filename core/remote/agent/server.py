"""The agent's server loop: `gpu-train-monitor agent` on the GPU machine, speaking
gpu_train_monitor.remote.wire.protocol on its stdin and stdout (the SSH session's pipe).

It says hello at once, then wants the client's hello (same protocol version, or it answers a `version` error and
exits EXIT_VERSION) before any other request. Requests are read in the main thread and answered in order; the
stream ops (readings, follow) run in a thread each and write their lines in between. Every line is written whole
under one lock. A malformed, oversized or unknown request is answered with an error and the agent goes on.
End of input (the connection dropped, the client closed) ends the agent at once, exit 0, and never stops the
runs it started: they run in sessions of their own (gpu_train_monitor.remote.agent.spawn).
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ...base.errors import ConfigError, UserError
from ...base.text import Message
from ...store.run_store import RunNotFound, RunStore
from ..wire.protocol import (
    BAD_REQUEST,
    EXIT_VERSION,
    INTERNAL,
    MAX_REPLY_BYTES,
    MAX_REQUEST_BYTES,
    NOT_FOUND,
    PROTOCOL_VERSION,
    USER_ERROR,
    VERSION,
    LineReader,
    ProtocolError,
    agent_hello,
    decode,
    encode,
    error_reply,
    reply,
    stream_data,
    stream_end,
    version_mismatch,
)
from .policy import AgentPolicy
from .spawn import Spawner

STREAM_JOIN_S = 1.0  # how long the agent waits for its stream threads when it ends
MAX_STREAMS = 32  # streams one connection may have running at once: each is a thread (and a store connection)


class Stream:
    """One running stream: its id (the request's), a stop flag, and the agent it writes through."""

    def __init__(self, agent: Agent, stream_id: int) -> None:
        self.agent = agent
        self.id = stream_id
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    @property
    def stopped(self) -> bool:
        return self.stop.is_set() or self.agent.closing.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True when the stream should end (cancelled, or the agent ends)."""
        self.stop.wait(seconds)
        return self.stopped

    def data(self, data: dict[str, Any]) -> bool:
        """Send one data line; False when the stream should end instead."""
        return not self.stopped and self.agent.send(stream_data(self.id, data))

    def end(self, reason: str, message: str = "") -> None:
        line = stream_end(self.id, reason)
        if message:
            line["message"] = " ".join(str(message).split())
        if not self.agent.closing.is_set():
            self.agent.send(line)


@dataclass(frozen=True)
class StartStream:
    """What a stream op returns: the stream is started once its reply `{"stream": id}` is written."""

    run: Callable[[Stream], None]


Op = Callable[["Agent", int, dict[str, Any]], Any]  # an op: (agent, request id, request) -> result or StartStream


class Agent:
    """Serves one connection: `serve()` returns the exit code. `ops` is the op table (agent.ops.OPS): handed in,
    so this loop imports none of the ops that import it."""

    def __init__(
        self,
        store: RunStore,
        stdin: IO[bytes],
        stdout: IO[bytes],
        app: str,
        host: str,
        allowed: tuple[Path, ...] = (),
        *,
        ops: Mapping[str, Op],
    ) -> None:
        self.ops = ops
        self.store = store  # the main thread's connection; each stream opens its own
        self.store_path = Path(store.path)
        self.app = app
        self.host = host
        self.policy = AgentPolicy(allowed, host)  # what it may run: the folders it was started with (--allow)
        self.closing = threading.Event()
        self.spawner = Spawner(self.store_path)
        self._in = stdin
        self._out = stdout
        self._write_lock = threading.Lock()
        self._streams: dict[int, Stream] = {}
        self._streams_lock = threading.Lock()

    # ---- writing ---------------------------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> bool:
        """Write one whole line and flush; False when the other side is gone (the agent then ends)."""
        data = encode(message, MAX_REPLY_BYTES)
        with self._write_lock:
            if self.closing.is_set() and "hello" not in message:
                return False
            try:
                self._out.write(data)
                self._out.flush()
            except (OSError, ValueError):  # a broken pipe, a closed stdout
                self.closing.set()
                return False
        return True

    # ---- the loop --------------------------------------------------------------------------------
    def serve(self) -> int:
        from ...store.schema import SCHEMA_VERSION

        self.send(agent_hello(self.app, self.host, str(self.store_path), SCHEMA_VERSION))
        reaper = threading.Thread(target=self._reap, name="agent-reaper", daemon=True)
        reaper.start()
        reader = LineReader(self._in, MAX_REQUEST_BYTES)
        greeted = False
        try:
            while not self.closing.is_set():
                try:
                    line = reader.read()
                    if line is None:
                        break  # end of input: the connection is gone
                    request = decode(line)
                except ProtocolError as exc:
                    self.send(error_reply(exc.request_id, str(exc), exc.kind))
                    continue
                if not greeted:
                    greeted, exit_code = self._hello(request)
                    if exit_code is not None:
                        return exit_code
                    continue
                self._handle(request)
        finally:
            self._close()
        return 0

    def _hello(self, request: dict[str, Any]) -> tuple[bool, int | None]:
        """Answer what should be the client's hello: (whether it was, the exit code when the agent must end)."""
        request_id = request.get("id") if _is_int(request.get("id")) else None
        if request.get("op") != "hello":
            self.send(error_reply(request_id, Message("say hello first (op hello, with your protocol)"), BAD_REQUEST))
            return False, None
        theirs = request.get("protocol")
        if theirs != PROTOCOL_VERSION or isinstance(theirs, bool):
            there_app = request.get("app") if isinstance(request.get("app"), str) else "?"
            mismatch = version_mismatch(PROTOCOL_VERSION, self.app, theirs, there_app, "the other machine")
            self.send(error_reply(request_id, mismatch, VERSION))
            print(f"gpu-train-monitor agent: {mismatch}", file=sys.stderr)
            return False, EXIT_VERSION
        self.send(reply(request_id if request_id is not None else 0, {"protocol": PROTOCOL_VERSION, "app": self.app}))
        return True, None

    def _handle(self, request: dict[str, Any]) -> None:
        raw_id = request.get("id")
        request_id = raw_id if _is_int(raw_id) else None
        try:
            if request_id is None:
                raise ProtocolError(BAD_REQUEST, Message("a request needs an integer id"))
            op = request.get("op")
            handler = self.ops.get(op) if isinstance(op, str) else None
            if handler is None:
                raise ProtocolError(BAD_REQUEST, Message("no such op: {op}", op=repr(op)))
            result = handler(self, request_id, request)
            if isinstance(result, StartStream):
                self._start_stream(request_id, result)
            else:
                self.send(reply(request_id, result))
        except ProtocolError as exc:
            self.send(error_reply(request_id, str(exc), exc.kind))
        except RunNotFound as exc:
            self.send(error_reply(request_id, str(exc), NOT_FOUND))
        except UserError as exc:
            answer = error_reply(request_id, str(exc), USER_ERROR)
            if isinstance(exc, ConfigError):
                answer["field"] = exc.field
            self.send(answer)
        except Exception as exc:  # a bug: say so, keep serving, and leave the traceback on stderr
            traceback.print_exc(file=sys.stderr)
            self.send(error_reply(request_id, f"the agent failed: {type(exc).__name__}: {exc}", INTERNAL))

    # ---- streams ---------------------------------------------------------------------------------
    def _start_stream(self, stream_id: int, start: StartStream) -> None:
        """Start the stream's thread once its reply is written; refused, with nothing started, when this
        connection has MAX_STREAMS running already (each costs a thread and its memory: a client asking for
        hundreds would exhaust the machine the runs train on)."""
        with self._streams_lock:
            if stream_id in self._streams:
                raise ProtocolError(BAD_REQUEST, Message("stream {id} is running already", id=stream_id))
            if len(self._streams) >= MAX_STREAMS:
                raise ProtocolError(
                    USER_ERROR,
                    Message(
                        "this connection has {limit} streams running, the most one connection may have; cancel "
                        "one before starting another",
                        limit=MAX_STREAMS,
                    ),
                )
            stream = Stream(self, stream_id)
            self._streams[stream_id] = stream
        self.send(reply(stream_id, {"stream": stream_id}))
        stream.thread = threading.Thread(
            target=self._run_stream, args=(stream, start.run), name=f"agent-stream-{stream_id}", daemon=True
        )
        stream.thread.start()

    def _run_stream(self, stream: Stream, run: Callable[[Stream], None]) -> None:
        try:
            run(stream)
        except UserError as exc:
            stream.end("error", str(exc))
        except Exception as exc:
            traceback.print_exc(file=sys.stderr)
            stream.end("error", f"the agent failed: {type(exc).__name__}: {exc}")
        finally:
            with self._streams_lock:
                self._streams.pop(stream.id, None)

    def cancel(self, stream_id: int) -> None:
        """Stop stream `stream_id` (its thread sends `end` with reason "cancelled"); RunNotFound-like when none."""
        with self._streams_lock:
            stream = self._streams.get(stream_id)
        if stream is None:
            raise ProtocolError(NOT_FOUND, Message("no stream {id} is running", id=stream_id))
        stream.stop.set()

    def _reap(self) -> None:
        while not self.closing.wait(1.0):
            self.spawner.reap()

    def _close(self) -> None:
        """End the streams (their threads leave the store as they found it) without waiting long for them."""
        self.closing.set()
        with self._streams_lock:
            streams = list(self._streams.values())
        for stream in streams:
            stream.stop.set()
        for stream in streams:
            if stream.thread is not None:
                stream.thread.join(STREAM_JOIN_S)
        self.spawner.reap()


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
