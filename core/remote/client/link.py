"""The client's connection to the agent: `ssh -T HOST gpu-train-monitor agent` as a child process, spoken to
in gpu_train_monitor.remote.wire.protocol's JSON lines.

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
they must be quick and must not call `request` (queue the data instead, as
gpu_train_monitor.remote.client.reconnecting does).
A transport that dies ends every waiting request with ConnectionLost at once and every stream with LINK_LOST;
nothing waits longer than its timeout.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

from ...base.text import Message
from ...device.system_info import app_version  # what the hello says
from ..wire import protocol
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
from .replies import Replies, Waiting
from .target import RemoteTarget
from .transport import READER_JOIN_S, Transport

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
CANCEL_TIMEOUT_S = 2.0  # how long `cancel` waits for the agent's answer (its callbacks are off at once anyway)
NOISE_LINES = 200  # lines a login shell may print before the agent's hello (a chatty .bashrc): skipped


class AgentLink:
    """One connection to the agent on `target`; see the module's docstring for its use."""

    def __init__(self, target: RemoteTarget, *, connect_timeout_s: float = 20.0, request_timeout_s: float = 15.0):
        self.target = target
        self.connect_timeout_s = connect_timeout_s
        self.request_timeout_s = request_timeout_s
        self.host_name = ""
        self.hello: dict[str, Any] = {}
        self._transport: Transport | None = None
        self._ids = itertools.count(1)
        self._replies = Replies()
        self.end_messages = self._replies.end_messages  # stream id -> the agent's words on why it ended
        self._hello_seen = threading.Event()
        self._closing = False
        self._threads: list[threading.Thread] = []
        self._latency: float | None = None

    # ---- connecting ------------------------------------------------------------------------------
    def connect(self) -> dict[str, Any]:
        """Start the transport, read the agent's hello and answer it; the agent's hello. Raises the
        RemoteError that says why not (the transport is ended then)."""
        transport = Transport(self.target)
        transport.start()  # RemoteError when ssh cannot even be run
        self._transport = transport
        if self._closing:  # closed from another thread meanwhile (a window's Cancel)
            self.close()
            raise self._closed_error()
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
        if self._replies.failure is not None and not self.hello:
            raise self._closed_error() if self._closing else self._before_hello_failure()
        hello = self.hello
        theirs = hello.get("protocol")
        self.host_name = str(hello.get("host") or self.target.host)
        waiting = self._send_request(0, protocol.client_hello(app_version()))
        if not protocol.speaks_this_protocol(theirs):
            raise self._version_error(theirs)
        reply = self._wait(waiting, 0, "hello", max(0.1, deadline - time.monotonic()))
        if not reply.get("ok"):
            if reply.get("kind") == protocol.VERSION:  # same protocol, refused all the same: its words say why
                raise self._version_error(theirs, str(reply.get("error") or ""))
            raise RemoteRequestFailed(str(reply.get("error", "")), str(reply.get("kind", "")))
        return hello

    def _version_error(self, theirs: Any, refusal: str = "") -> VersionMismatch:
        return VersionMismatch(
            protocol.version_mismatch(
                protocol.PROTOCOL_VERSION,
                app_version(),
                theirs,
                str(self.hello.get("app", "?")),
                self.target.host,
                refusal,
            )
        )

    def _before_hello_failure(self) -> RemoteError:
        """What ended the transport before the hello: ssh's or the remote shell's words, or the link's own."""
        assert self._transport is not None
        returncode = self._transport.wait_ended()
        if returncode is None:  # a transport that broke the protocol but lives: the link's own words
            assert self._replies.failure is not None
            return self._replies.failure
        stderr = self._transport.stderr_text()
        return classify(self.target.host, returncode, stderr, self.target.agent_command_text())

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
        self._replies.open_stream(request_id, on_data, on_end)  # before the request: its lines follow the reply
        try:
            waiting = self._send_request(request_id, protocol.request(request_id, op, **args))
            reply = self._wait(waiting, request_id, op, self.request_timeout_s)
        except RemoteError:
            self._replies.close_stream(request_id)
            raise
        if not reply.get("ok"):
            self._replies.close_stream(request_id)
            raise RemoteRequestFailed(str(reply.get("error") or "the agent refused the stream"), str(reply.get("kind")))
        return request_id

    def cancel(self, stream_id: int) -> None:
        """Stop a stream: no more lines reach its callbacks (its on_end is not called)."""
        if self._replies.close_stream(stream_id) and self.alive:
            with contextlib.suppress(RemoteError):  # best effort: a silent agent must not hold the caller long
                self.request("cancel", stream=stream_id, timeout_s=min(self.request_timeout_s, CANCEL_TIMEOUT_S))

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
        return None if self._transport is None else self._transport.pid

    @property
    def exit_code(self) -> int | None:
        """The transport's exit code once it has ended (None while it runs)."""
        return None if self._transport is None else self._transport.returncode

    @property
    def alive(self) -> bool:
        return self._transport is not None and self._replies.failure is None and not self._closing

    @property
    def failure(self) -> RemoteError | None:
        """Why the link is dead (None while it lives)."""
        return self._replies.failure

    def _send_request(self, request_id: int, message: dict[str, Any]) -> Waiting:
        try:
            line = protocol.encode(message, protocol.MAX_REQUEST_BYTES)
        except protocol.ProtocolError as exc:
            raise RemoteError(Message("the request is too long to send: {error}", error=str(exc))) from None
        waiting = self._replies.expect(request_id)
        try:
            assert self._transport is not None
            self._transport.write(line)
        except (OSError, ValueError):  # a closed pipe: the transport is gone
            self._fail(self._lost_error())
        return waiting

    def _wait(self, waiting: Waiting, request_id: int, op: str, timeout_s: float) -> dict[str, Any]:
        if not waiting.done.wait(timeout_s):
            self._replies.forget(request_id)
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

    def _read_stdout(self) -> None:
        assert self._transport is not None
        reader = protocol.LineReader(self._transport.stdout, protocol.MAX_REPLY_BYTES)
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
        except (OSError, ValueError):  # the pipe closed under us
            self._fail(self._lost_error())
        finally:
            self._hello_seen.set()
            self._transport.close_stdout()  # by its reader: from another thread, closing waits for this read

    def _dispatch(self, message: dict[str, Any]) -> None:
        if not self.hello:
            hello = message.get("hello")
            if not isinstance(hello, dict):
                raise ConnectionLost(Message("the agent on {host} did not start with its hello", host=self.target.host))
            self.hello = hello
            self._hello_seen.set()
            return
        self._replies.dispatch(message)

    def _closed_error(self) -> RemoteError:
        return ConnectionLost(Message("the connection to {host} was closed", host=self.target.host))

    def _lost_error(self) -> RemoteError:
        if self._closing:
            return self._closed_error()
        transport = self._transport
        detail = last_line(transport.stderr_text()) if transport is not None else "no message"
        if transport is not None and transport.returncode is not None and detail == "no message":
            detail = Message("the transport exited with code {code}", code=transport.returncode)
        return ConnectionLost(
            Message(
                "the connection to {host} was lost ({detail}); runs there go on", host=self.target.host, detail=detail
            )
        )

    def _fail(self, error: RemoteError) -> None:
        """The link is dead: every waiting request gets `error`, every stream ends."""
        self._replies.fail(error, LINK_CLOSED if self._closing else LINK_LOST)

    # ---- closing ---------------------------------------------------------------------------------
    def close(self) -> None:
        """End the connection: the agent sees end of input and exits (runs it started go on). Never blocks for
        more than a few seconds: the transport's whole process group is ended (a transport that does not exit,
        and whatever it left holding the pipes), and no reader thread is waited on for long."""
        self._closing = True
        transport = self._transport
        if transport is None:
            return
        transport.close()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(READER_JOIN_S)  # its pipe's end is due: the transport's whole group is gone
        self._fail(self._closed_error())
        if not any(thread.is_alive() for thread in self._threads):  # else the reader closes it at its end
            transport.close_stdout()

    def __enter__(self) -> AgentLink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_arguments(args: dict[str, Any]) -> None:
    if "id" in args or "op" in args:  # they would replace the request's own number and name
        raise ValueError("a request's arguments cannot be named id or op")
