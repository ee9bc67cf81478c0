"""The client's connection to the agent: `ssh -T HOST gpu-train-monitor agent` as a child process, spoken to
in core.remote.protocol's JSON lines.

API (what the window and the CLI use; REMOTE.md's "client side", plus `ping`, `cancel` and `alive`):

    link = AgentLink(target, connect_timeout_s=20.0, request_timeout_s=15.0)
    hello = link.connect()          # the agent's hello; AuthenticationFailed, UnknownHost, HostKeyNotTrusted,
                                    # Unreachable, AgentMissing, VersionMismatch, RemoteTimeout, ConnectionLost
    link.host_name                  # the remote's hostname, from its hello
    link.request(op, **args)        # the result; RemoteRequestFailed (the agent's one line and kind),
                                    # RemoteTimeout, ConnectionLost; thread-safe
    link.stream(op, on_data, on_end, **args) -> stream id   # on_end(reason): the agent's reason, or
                                    # LINK_LOST / LINK_CLOSED when the link went away first;
                                    # link.end_messages[stream id]: the agent's words on why, when it said
    link.cancel(stream_id); link.ping() -> seconds; link.latency_s(); link.alive; link.close()

Every error is a RemoteError (a UserError: one line). One reader thread reads the agent's lines and hands
each reply to the request waiting for it and each stream line to its callbacks, which run on that thread:
they must be quick and must not call `request` (queue the data instead, as core.remote.follow does). A
transport that dies ends every waiting request with ConnectionLost at once and every stream with LINK_LOST;
nothing waits longer than its timeout.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import itertools
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..base.text import Message
from . import protocol
from .failures import (
    AgentMissing,
    AuthenticationFailed,
    ConnectionLost,
    HostKeyNotTrusted,
    RemoteError,
    RemoteRequestFailed,
    RemoteTimeout,
    UnknownHost,
    Unreachable,
    VersionMismatch,
    classify,
    last_line,
)
from .target import RemoteTarget

__all__ = [
    "LINK_CLOSED",
    "LINK_LOST",
    "AgentLink",
    "AgentMissing",
    "AuthenticationFailed",
    "ConnectionLost",
    "HostKeyNotTrusted",
    "RemoteError",
    "RemoteRequestFailed",
    "RemoteTimeout",
    "UnknownHost",
    "Unreachable",
    "VersionMismatch",
]

LINK_LOST = "connection lost"  # a stream's end reason when the link dropped before the agent ended it
LINK_CLOSED = "closed"  # ... when this side closed the link
NOISE_LINES = 200  # lines a login shell may print before the agent's hello (a chatty .bashrc): skipped
STDERR_KEPT = 64 * 1024  # the tail of ssh's stderr kept for messages
CLOSE_WAIT_S = 2.0


def app_version() -> str:
    """This installation's version ('unknown' from a source tree that was never installed)."""
    try:
        return importlib.metadata.version("gpu-train-monitor")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@dataclass
class _Waiting:
    done: threading.Event = field(default_factory=threading.Event)
    reply: dict[str, Any] | None = None
    error: RemoteError | None = None


@dataclass
class _Stream:
    on_data: Callable[[dict[str, Any]], None]
    on_end: Callable[[str], None]


class AgentLink:
    """One connection to the agent on `target`; see the module's docstring for its use."""

    def __init__(self, target: RemoteTarget, *, connect_timeout_s: float = 20.0, request_timeout_s: float = 15.0):
        self.target = target
        self.connect_timeout_s = connect_timeout_s
        self.request_timeout_s = request_timeout_s
        self.host_name = ""
        self.hello: dict[str, Any] = {}
        self._process: subprocess.Popen[bytes] | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()  # guards the tables below and the failure
        self._write_lock = threading.Lock()
        self._waiting: dict[int, _Waiting] = {}
        self._streams: dict[int, _Stream] = {}
        self._hello_seen = threading.Event()
        self._failure: RemoteError | None = None
        self._closing = False
        self._stderr = bytearray()
        self._threads: list[threading.Thread] = []
        self._latency: float | None = None
        self.end_messages: dict[int, str] = {}  # stream id -> the agent's words on why it ended (when it said)

    # ---- connecting ------------------------------------------------------------------------------
    def connect(self) -> dict[str, Any]:
        """Start the transport, read the agent's hello and answer it; the agent's hello. Raises the
        RemoteError that says why not (the transport is ended then)."""
        argv = self.target.argv()
        try:
            self._process = subprocess.Popen(  # a session of its own: a terminal's Ctrl+C is ours to forward
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
            )
        except OSError as exc:
            raise RemoteError(
                Message(
                    "cannot run {program} to reach {host}: {error}; install OpenSSH's client (ssh)",
                    program=argv[0],
                    host=self.target.host,
                    error=exc.strerror or str(exc),
                )
            ) from None
        self._start(self._read_stderr, "stderr")
        self._start(self._read_stdout, "reader")
        try:
            return self._handshake()
        except BaseException:
            self.close()
            raise

    def _handshake(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.connect_timeout_s
        if not self._hello_seen.wait(self.connect_timeout_s):
            raise RemoteTimeout(
                Message(
                    "no answer from {host} within {seconds:g} s (ssh ran `{command}`); check that `ssh {host}` "
                    "works from this machine",
                    host=self.target.host,
                    seconds=self.connect_timeout_s,
                    command=" ".join(self.target.argv()),
                )
            )
        if self._failure is not None and not self.hello:
            raise self._before_hello_failure()
        hello = self.hello
        theirs = hello.get("protocol")
        self.host_name = str(hello.get("host") or self.target.host)
        waiting = self._send_request(0, protocol.client_hello(app_version()))
        if theirs != protocol.PROTOCOL_VERSION:
            raise self._version_error(theirs)
        reply = self._wait(waiting, 0, "hello", max(0.1, deadline - time.monotonic()))
        if not reply.get("ok"):
            if reply.get("kind") == protocol.VERSION:
                raise self._version_error(theirs)
            raise RemoteRequestFailed(str(reply.get("error", "")), str(reply.get("kind", "")))
        return hello

    def _version_error(self, theirs: Any) -> VersionMismatch:
        return VersionMismatch(
            protocol.version_mismatch(
                protocol.PROTOCOL_VERSION, app_version(), theirs, str(self.hello.get("app", "?")), self.target.host
            )
        )

    def _before_hello_failure(self) -> RemoteError:
        """What ended the transport before the hello: ssh's or the remote shell's words, or the link's own."""
        process = self._process
        assert process is not None
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(CLOSE_WAIT_S)
        for thread in self._threads:
            if thread.name.endswith("stderr"):
                thread.join(CLOSE_WAIT_S)
        if process.returncode is None:  # a transport that broke the protocol but lives: the link's own words
            assert self._failure is not None
            return self._failure
        stderr = bytes(self._stderr).decode("utf-8", "replace")
        return classify(self.target.host, process.returncode, stderr, self.target.agent_command_text())

    # ---- requests --------------------------------------------------------------------------------
    def request(self, op: str, *, timeout_s: float | None = None, **args: Any) -> dict[str, Any]:
        """Send one request and wait for its result (the agent's error as RemoteRequestFailed)."""
        _check_arguments(args)
        request_id = next(self._ids)
        waiting = self._send_request(request_id, protocol.request(request_id, op, **args))
        reply = self._wait(waiting, request_id, op, self.request_timeout_s if timeout_s is None else timeout_s)
        if reply.get("ok"):
            result = reply.get("result")
            return result if isinstance(result, dict) else {}
        raise RemoteRequestFailed(str(reply.get("error") or "the agent refused the request"), str(reply.get("kind")))

    def stream(
        self, op: str, on_data: Callable[[dict[str, Any]], None], on_end: Callable[[str], None], **args: Any
    ) -> int:
        """Start a stream op; its lines go to `on_data` and its end (reason) to `on_end`, on the reader thread.
        Returns the stream's id (for `cancel`)."""
        _check_arguments(args)
        request_id = next(self._ids)
        with self._lock:  # registered before the request leaves: its first line may come right after the reply
            self._streams[request_id] = _Stream(on_data, on_end)
        try:
            waiting = self._send_request(request_id, protocol.request(request_id, op, **args))
            reply = self._wait(waiting, request_id, op, self.request_timeout_s)
        except RemoteError:
            with self._lock:
                self._streams.pop(request_id, None)
            raise
        if not reply.get("ok"):
            with self._lock:
                self._streams.pop(request_id, None)
            raise RemoteRequestFailed(str(reply.get("error") or "the agent refused the stream"), str(reply.get("kind")))
        return request_id

    def cancel(self, stream_id: int) -> None:
        """Stop a stream: no more lines reach its callbacks (its on_end is not called)."""
        with self._lock:
            known = self._streams.pop(stream_id, None) is not None
        if known and self.alive:
            with contextlib.suppress(RemoteError):
                self.request("cancel", stream=stream_id)

    def ping(self, timeout_s: float | None = None) -> float:
        """The round trip of one `ping`, in seconds (also what `latency_s` says from now on)."""
        started = time.monotonic()
        self.request("ping", timeout_s=timeout_s)
        self._latency = time.monotonic() - started
        return self._latency

    def latency_s(self) -> float | None:
        """The last ping's round trip; None before the first."""
        return self._latency

    @property
    def pid(self) -> int | None:
        """The transport's process id (ssh's, or the local agent's in tests)."""
        return None if self._process is None else self._process.pid

    @property
    def alive(self) -> bool:
        return self._process is not None and self._failure is None and not self._closing

    @property
    def failure(self) -> RemoteError | None:
        """Why the link is dead (None while it lives)."""
        return self._failure

    def _send_request(self, request_id: int, message: dict[str, Any]) -> _Waiting:
        try:
            line = protocol.encode(message, protocol.MAX_REQUEST_BYTES)
        except protocol.ProtocolError as exc:
            raise RemoteError(Message("the request is too long to send: {error}", error=str(exc))) from None
        waiting = _Waiting()
        with self._lock:
            if self._failure is not None:
                raise self._failure
            self._waiting[request_id] = waiting
        process = self._process
        try:
            with self._write_lock:
                assert process is not None and process.stdin is not None
                process.stdin.write(line)
                process.stdin.flush()
        except (OSError, ValueError):  # a closed pipe: the transport is gone
            self._fail(self._lost_error())
        return waiting

    def _wait(self, waiting: _Waiting, request_id: int, op: str, timeout_s: float) -> dict[str, Any]:
        if not waiting.done.wait(timeout_s):
            with self._lock:
                self._waiting.pop(request_id, None)
            raise RemoteTimeout(
                Message(
                    "{host} did not answer `{op}` within {seconds:g} s; the connection looks dead",
                    host=self.target.host,
                    op=op,
                    seconds=timeout_s,
                )
            )
        if waiting.error is not None:
            raise waiting.error
        assert waiting.reply is not None
        return waiting.reply

    # ---- the reader threads ----------------------------------------------------------------------
    def _start(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=f"agent-link {self.target.host} {name}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _read_stderr(self) -> None:
        process = self._process
        assert process is not None and process.stderr is not None
        for chunk in iter(lambda: process.stderr.read1(4096), b""):  # type: ignore[union-attr]
            self._stderr += chunk
            del self._stderr[:-STDERR_KEPT]

    def _read_stdout(self) -> None:
        process = self._process
        assert process is not None and process.stdout is not None
        reader = protocol.LineReader(process.stdout, protocol.MAX_REPLY_BYTES)
        noise = 0
        try:
            while True:
                try:
                    line = reader.read()
                    if line is None:
                        break
                    message = protocol.decode(line)
                except protocol.ProtocolError as exc:
                    if not self.hello and exc.kind == protocol.BAD_REQUEST and noise < NOISE_LINES:
                        noise += 1  # a login shell's greeting before the agent starts
                        continue
                    raise ConnectionLost(
                        Message(
                            "the agent on {host} broke the protocol: {error}", host=self.target.host, error=str(exc)
                        )
                    ) from None
                self._dispatch(message)
            self._fail(self._lost_error())
        except RemoteError as exc:
            self._fail(exc)
        except (OSError, ValueError):  # the pipe closed under us (close())
            self._fail(self._lost_error())
        finally:
            self._hello_seen.set()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if not self.hello:
            hello = message.get("hello")
            if not isinstance(hello, dict):
                raise ConnectionLost(Message("the agent on {host} did not start with its hello", host=self.target.host))
            self.hello = hello
            self._hello_seen.set()
            return
        if "stream" in message:
            with self._lock:
                handlers = self._streams.get(message["stream"])
                if handlers is not None and message.get("end"):
                    del self._streams[message["stream"]]
            if handlers is None:
                return  # a cancelled stream's last lines
            if message.get("end"):
                if message.get("message"):
                    self.end_messages[message["stream"]] = str(message["message"])
                handlers.on_end(str(message.get("reason", "")))
            elif isinstance(message.get("data"), dict):
                handlers.on_data(message["data"])
            return
        with self._lock:
            waiting = self._waiting.pop(message.get("id"), None) if isinstance(message.get("id"), int) else None
        if waiting is not None:
            waiting.reply = message
            waiting.done.set()

    def _lost_error(self) -> RemoteError:
        if self._closing:
            return ConnectionLost(Message("the connection to {host} was closed", host=self.target.host))
        process = self._process
        detail = last_line(bytes(self._stderr).decode("utf-8", "replace"))
        if process is not None and process.poll() is not None and detail == "no message":
            detail = Message("the transport exited with code {code}", code=process.returncode)
        return ConnectionLost(
            Message(
                "the connection to {host} was lost ({detail}); runs there go on", host=self.target.host, detail=detail
            )
        )

    def _fail(self, error: RemoteError) -> None:
        """The link is dead: every waiting request gets `error`, every stream ends."""
        with self._lock:
            if self._failure is None:
                self._failure = error
            waiting, self._waiting = self._waiting, {}
            streams, self._streams = self._streams, {}
        for entry in waiting.values():
            entry.error = self._failure
            entry.done.set()
        reason = LINK_CLOSED if self._closing else LINK_LOST
        for handlers in streams.values():
            with contextlib.suppress(Exception):
                handlers.on_end(reason)

    # ---- closing ---------------------------------------------------------------------------------
    def close(self) -> None:
        """End the connection: the agent sees end of input and exits (runs it started go on). Never blocks for
        more than a few seconds: a transport that does not exit is killed."""
        self._closing = True
        process = self._process
        if process is None:
            return
        with contextlib.suppress(OSError, ValueError), self._write_lock:
            assert process.stdin is not None
            process.stdin.close()
        try:
            process.wait(CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(CLOSE_WAIT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(CLOSE_WAIT_S)
        self._fail(ConnectionLost(Message("the connection to {host} was closed", host=self.target.host)))
        for pipe in (process.stdout, process.stderr):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()

    def __enter__(self) -> AgentLink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_arguments(args: dict[str, Any]) -> None:
    if "id" in args or "op" in args:  # they would replace the request's own number and name
        raise ValueError("a request's arguments cannot be named id or op")
