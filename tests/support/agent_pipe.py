"""`gpu-train-monitor agent` as a local subprocess on pipes, for the protocol's tests (and the client's: the
same agent, no ssh): send a request, read its reply and stream lines with a timeout, never hang.

A reader thread turns each stdout line into a dict (or `{"raw": bytes}` when it is not JSON); `request` waits for
the reply with its id and keeps the stream lines that arrive meanwhile for `stream_lines`."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.support.processes import ENV

TIMEOUT_S = 20.0
EOF_LINE: dict[str, Any] = {"eof": True}  # what `read` returns once stdout has closed


def agent_command(store: Path | str, *extra: str) -> list[str]:
    """The agent on `store`, allowed to run the scripts and own models of the store's folder (a test's tmp_path)."""
    folder = Path(store).parent
    return [sys.executable, "-m", "gpu_train_monitor", "agent", "--runs-db", str(store), "--allow", str(folder), *extra]


class AgentPipe:
    """One agent process. Use as a context manager: it is killed (and reaped) at exit if still running."""

    def __init__(self, store: Path | str, *, command: Sequence[str] | None = None, env: dict[str, str] | None = None):
        self.process = subprocess.Popen(
            list(command) if command is not None else agent_command(store),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env if env is not None else ENV,
        )
        self._lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self._held: list[dict[str, Any]] = []  # lines read while waiting for another (stream lines, replies)
        self._next_id = 1
        self._reader = threading.Thread(target=self._read_stdout, daemon=True)
        self._reader.start()
        self._stderr = bytearray()  # drained as it comes: a full pipe would block the agent mid-write
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()
        self.hello: dict[str, Any] | None = None

    def __enter__(self) -> AgentPipe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    # ---- reading -----------------------------------------------------------------------------------
    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                self._lines.put(json.loads(line))
            except ValueError:
                self._lines.put({"raw": line})
        self._lines.put(EOF_LINE)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for chunk in iter(lambda: self.process.stderr.read1(4096), b""):  # type: ignore[union-attr]
            self._stderr += chunk

    def read(self, timeout: float = TIMEOUT_S) -> dict[str, Any]:
        """The next line not held back; AssertionError after `timeout` seconds."""
        if self._held:
            return self._held.pop(0)
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line from the agent within {timeout} s; stderr so far unread") from None
        if line is EOF_LINE:
            self._lines.put(EOF_LINE)  # every later read sees the end too
        return line

    def read_until(self, matches: Any, timeout: float = TIMEOUT_S) -> dict[str, Any]:
        """The first line for which `matches(line)` is true; others are held for later reads."""
        deadline = time.monotonic() + timeout
        skipped: list[dict[str, Any]] = []
        held, self._held = self._held, []
        try:
            for line in held:
                if matches(line):
                    return line
                skipped.append(line)
            while True:
                line = self.read(max(deadline - time.monotonic(), 0.01))
                if matches(line):
                    return line
                assert line is not EOF_LINE, f"the agent's output ended first; lines: {skipped[-5:]}"
                skipped.append(line)
        finally:
            self._held = skipped + self._held

    def read_hello(self, timeout: float = TIMEOUT_S) -> dict[str, Any]:
        line = self.read(timeout)
        assert "hello" in line, line
        self.hello = line["hello"]
        return line["hello"]

    # ---- writing -----------------------------------------------------------------------------------
    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.process.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def request(self, op: str, timeout: float = TIMEOUT_S, **args: Any) -> dict[str, Any]:
        """Send `op` with a fresh id and return its whole reply (ok or not)."""
        request_id = self._next_id
        self._next_id += 1
        self.send({"id": request_id, "op": op, **args})
        return self.read_until(lambda line: line.get("id") == request_id and "ok" in line, timeout)

    def result(self, op: str, timeout: float = TIMEOUT_S, **args: Any) -> dict[str, Any]:
        """The result of a request that must succeed."""
        answer = self.request(op, timeout, **args)
        assert answer["ok"], answer
        return answer["result"]

    def connect(self, timeout: float = TIMEOUT_S) -> dict[str, Any]:
        """Read the agent's hello and answer it with this protocol's; the agent's hello."""
        from gpu_train_monitor.remote.wire.protocol import client_hello

        hello = self.read_hello(timeout)
        self.send(client_hello("tests"))
        answer = self.read_until(lambda line: line.get("id") == 0, timeout)
        assert answer["ok"], answer
        return hello

    def stream_lines(self, stream: int, timeout: float = TIMEOUT_S) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Every data of stream `stream` until its end line: (data, end)."""
        data: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while True:
            line = self.read_until(lambda line: line.get("stream") == stream, max(deadline - time.monotonic(), 0.01))
            if line.get("end"):
                return data, line
            data.append(line["data"])

    # ---- ending ------------------------------------------------------------------------------------
    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    def wait(self, timeout: float = TIMEOUT_S) -> int:
        return self.process.wait(timeout)

    def stderr(self) -> str:
        """Everything the agent wrote on stderr (once it has exited)."""
        assert self.process.poll() is not None
        self._stderr_reader.join(TIMEOUT_S)
        return bytes(self._stderr).decode(errors="replace")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(TIMEOUT_S)
        self._reader.join(TIMEOUT_S)  # stdout ends with the process (the runs it started write to their logs)
        self._stderr_reader.join(TIMEOUT_S)
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
