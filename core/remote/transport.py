"""The process that carries the agent's pipe: `ssh ... HOST gpu-train-monitor agent` (or a test's local
command), its stdin for requests, its stdout for the agent's lines, and the tail of its stderr, where ssh and
the remote shell say what went wrong. Its own module because starting, draining and ending a child process
without ever blocking for long is a job apart from the protocol gpu_train_monitor.remote.link speaks over it.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
from typing import IO

from ..base.text import Message
from .failures import RemoteError
from .target import RemoteTarget

STDERR_KEPT = 64 * 1024  # the tail of ssh's stderr kept for messages
CLOSE_WAIT_S = 2.0  # how long an ending transport may take before it is terminated, then killed


class Transport:
    """The transport process of one connection."""

    def __init__(self, target: RemoteTarget) -> None:
        self.target = target
        self.argv = target.argv()
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr = bytearray()
        self._stderr_reader: threading.Thread | None = None
        self._write_lock = threading.Lock()

    def start(self) -> None:
        """Start it (in a session of its own: a terminal's Ctrl+C is this process's to forward, not ssh's to
        die of); RemoteError when the program cannot be run."""
        try:
            self._process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
            )
        except OSError as exc:
            raise RemoteError(
                Message(
                    "cannot run {program} to reach {host}: {error}; install OpenSSH's client (ssh)",
                    program=self.argv[0],
                    host=self.target.host,
                    error=exc.strerror or str(exc),
                )
            ) from None
        self._stderr_reader = threading.Thread(
            target=self._drain_stderr, name=f"agent-link {self.target.host} stderr", daemon=True
        )
        self._stderr_reader.start()

    @property
    def stdout(self) -> IO[bytes]:
        assert self._process is not None and self._process.stdout is not None
        return self._process.stdout

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    @property
    def returncode(self) -> int | None:
        """The exit code once it has exited (None while it runs)."""
        return None if self._process is None else self._process.poll()

    def write(self, line: bytes) -> None:
        """Send one whole line; OSError / ValueError when the pipe is closed (the transport is gone)."""
        assert self._process is not None and self._process.stdin is not None
        with self._write_lock:
            self._process.stdin.write(line)
            self._process.stdin.flush()

    def stderr_text(self) -> str:
        return bytes(self._stderr).decode("utf-8", "replace")

    def wait_ended(self) -> int | None:
        """Its exit code, waiting up to CLOSE_WAIT_S for it and for the last of its stderr; None if it runs on."""
        if self._process is None:
            return None
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(CLOSE_WAIT_S)
        if self._stderr_reader is not None:
            self._stderr_reader.join(CLOSE_WAIT_S)
        return self._process.poll()

    def close(self) -> None:
        """End of input (the agent exits; runs it started go on), then terminate, then kill: never blocks for
        more than a few seconds."""
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
        if self._stderr_reader is not None and self._stderr_reader is not threading.current_thread():
            self._stderr_reader.join(CLOSE_WAIT_S)

    def close_pipes(self) -> None:
        """Close the output pipes (after the readers are done with them)."""
        if self._process is None:
            return
        for pipe in (self._process.stdout, self._process.stderr):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()

    def _drain_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        stderr = self._process.stderr
        for chunk in iter(lambda: stderr.read1(4096), b""):  # type: ignore[attr-defined]
            self._stderr += chunk
            del self._stderr[:-STDERR_KEPT]
