"""The process that carries the agent's pipe: `ssh ... HOST gpu-train-monitor agent` (or a test's local
command), its stdin for requests, its stdout for the agent's lines, and the tail of its stderr, where ssh and
the remote shell say what went wrong. Its own module because starting, draining and ending a child process
without ever blocking for long is a job apart from the protocol gpu_train_monitor.remote.client.link speaks over it.

The transport runs in a session (and process group) of its own, so ending it ends the whole group: whatever
ssh left behind (a ProxyCommand, a remote shell's background job in a test's local transport) would otherwise
hold the pipes open, and a reader waiting for their end would wait as long as it lives. Closing therefore never
waits on a pipe or a reader thread for more than a short bound: a reader still blocked (a process that left the
group) closes its own pipe when its end finally comes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from typing import IO

from ...base.text import Message
from .failures import RemoteError
from .target import RemoteTarget

STDERR_KEPT = 64 * 1024  # the tail of ssh's stderr kept for messages
CLOSE_WAIT_S = 2.0  # how long an ending transport may take to exit on its own (end of input) before it is ended
KILL_WAIT_S = 1.0  # how long its process group may take to go after SIGTERM before SIGKILL
READER_JOIN_S = 0.5  # how long closing waits for a reader thread once the group is gone (its pipe's end is due)
LOCK_WAIT_S = 0.5  # how long closing waits for a writer to finish its line (a frozen transport may block it)


class Transport:
    """The transport process of one connection."""

    def __init__(self, target: RemoteTarget) -> None:
        self.target = target
        self.argv = target.argv()
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr = bytearray()
        self._stderr_reader: threading.Thread | None = None
        self._write_lock = threading.Lock()
        self._group_ended = False  # its group was signalled to its end: its id may belong to others from now on

    def start(self) -> None:
        """Start it (in a session of its own: a terminal's Ctrl+C is this process's to forward, not ssh's to
        die of; and its process group is what closing ends); RemoteError when the program cannot be run."""
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
        """The transport's process id, which is also its process group's (it leads a session of its own)."""
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
        _wait(self._process, CLOSE_WAIT_S)
        if self._stderr_reader is not None and self._stderr_reader is not threading.current_thread():
            self._stderr_reader.join(CLOSE_WAIT_S)
        return self._process.poll()

    def close(self) -> None:
        """End of input (the agent exits; runs it started go on), then the end of the transport's whole process
        group, terminated, then killed: never blocks for more than a few seconds, whatever the group's processes
        do with their pipes."""
        process = self._process
        if process is None or self._group_ended:
            return
        input_closed = self._close_stdin(process)
        if input_closed:
            _wait(process, CLOSE_WAIT_S)
        self._end_group(process)
        if not input_closed:  # its writer is unblocked now (a broken pipe)
            self._close_stdin(process)
        if self._stderr_reader is not None and self._stderr_reader is not threading.current_thread():
            self._stderr_reader.join(READER_JOIN_S)

    def close_stdout(self) -> None:
        """Close the agent's output pipe. Only for its reader, or once no reader reads it: closing a pipe another
        thread is reading waits for that read to end."""
        if self._process is not None and self._process.stdout is not None:
            with contextlib.suppress(OSError):
                self._process.stdout.close()

    def _close_stdin(self, process: subprocess.Popen[bytes]) -> bool:
        """Close the transport's input unless a writer still holds it (blocked on a frozen transport); whether it
        was closed."""
        if not self._write_lock.acquire(timeout=LOCK_WAIT_S):
            return False
        try:
            with contextlib.suppress(OSError, ValueError):
                assert process.stdin is not None
                process.stdin.close()
        finally:
            self._write_lock.release()
        return True

    def _end_group(self, process: subprocess.Popen[bytes]) -> None:
        """SIGTERM to what is left of the transport's process group, then SIGKILL to what outlives KILL_WAIT_S.

        The group's id is the transport's pid, which the system does not hand to another process while the group
        has a member: a signal to it reaches this transport's processes or, once they are all gone, no one (and
        none is sent after that)."""
        self._group_ended = True
        if not hasattr(os, "killpg"):  # Windows: no process group to signal; the transport itself is ended
            _end_process(process)
            return
        if not _signal_group(process.pid, signal.SIGTERM):
            return  # nobody left: the transport exited, and nothing it started stayed
        deadline = time.monotonic() + KILL_WAIT_S
        while time.monotonic() < deadline:
            if self._group_gone(process):
                return
            time.sleep(0.02)
        _signal_group(process.pid, signal.SIGKILL)
        _wait(process, CLOSE_WAIT_S)

    def _group_gone(self, process: subprocess.Popen[bytes]) -> bool:
        """Whether the transport has exited and nothing of its group still holds its stderr (or nothing of its
        group is left at all). Its end of file says so quicker than the group's id does: an orphan's zombie keeps
        that until the system's init reaps it, a second or more on some."""
        if process.poll() is None:
            return False
        stderr_done = self._stderr_reader is None or not self._stderr_reader.is_alive()
        return stderr_done or not _signal_group(process.pid, 0)

    def _drain_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        stderr = self._process.stderr
        try:
            for chunk in iter(lambda: stderr.read1(4096), b""):  # type: ignore[attr-defined]
                self._stderr += chunk
                del self._stderr[:-STDERR_KEPT]
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                stderr.close()  # here, by its only reader: closing it from elsewhere would wait for this read


def _wait(process: subprocess.Popen[bytes], seconds: float) -> bool:
    """Whether `process` exited within `seconds`."""
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


def _end_process(process: subprocess.Popen[bytes]) -> None:
    """Terminate `process`, then kill it after KILL_WAIT_S (where there are no process groups)."""
    if process.poll() is not None:
        return
    process.terminate()
    if not _wait(process, KILL_WAIT_S):
        process.kill()
        _wait(process, CLOSE_WAIT_S)


def _signal_group(group: int, number: int) -> bool:
    """Send `number` to process group `group`; whether any process was there to get it."""
    try:
        os.killpg(group, number)
    except ProcessLookupError:
        return False
    except PermissionError:  # only processes this user may not signal are left (a setuid program's)
        return False
    return True
