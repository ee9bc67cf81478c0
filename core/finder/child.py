"""A CPU trial's child process: its command line, ending it at once when the search is stopped, and why it
died, in words.

Stop must end a trial at once: a trial at a large batch runs for minutes (longer while the machine swaps), and
the search asking between trials left one running for over 40 s after Stop. So the finder waits for its child
in short slices (`POLL_S`) and, once asked to stop, ends it: SIGTERM, then SIGKILL after `GRACE_S`.

A trial that dies says why: by which signal it was killed (a crash: SIGSEGV or SIGABRT; a low-memory killer
such as earlyoom: SIGTERM), or with which exit code it exited, and the last line it wrote on stderr, never "no
message". SIGKILL is what the kernel's out-of-memory killer sends: that trial ran out of memory.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from typing import IO

from ..base.errors import UserError
from ..base.text import Message

POLL_S = 0.05  # how often a waiting search asks whether it was stopped
GRACE_S = 0.5  # between SIGTERM and SIGKILL: a trial deep in a C kernel may never run Python's handlers
OUT_OF_MEMORY_CODES = (3, -signal.SIGKILL, 128 + signal.SIGKILL)  # the trial's own marker; the OOM killer's


def trial_command(data_limit: int | None = None) -> list[str]:
    """The Python command line that runs `gpu_train_monitor.finder.trial` in a child that dies with this process.

    The child sets PR_SET_PDEATHSIG itself, not through preexec_fn, which is unsafe in a process with
    threads (the window runs the finder in one). `data_limit`: bytes its data segment may reach (RLIMIT_DATA,
    only ever lowered): a trial that would grow past it fails as out of memory in its own process."""
    limit = (
        "    import resource\n"
        "    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)\n"
        f"    want = {int(data_limit)} if hard == resource.RLIM_INFINITY else min({int(data_limit)}, hard)\n"
        "    if soft == resource.RLIM_INFINITY or want < soft:\n"
        "        resource.setrlimit(resource.RLIMIT_DATA, (want, hard))\n"
        if data_limit is not None
        else ""
    )
    bootstrap = (
        "import ctypes, os, runpy, sys\n"
        "if sys.platform.startswith('linux'):\n"
        "    ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG = 1, SIGKILL = 9\n"
        f"    if os.getppid() != {os.getpid()}:  # the parent died before the line above ran\n"
        "        os._exit(1)\n"
        f"{limit}"
        "runpy.run_module('gpu_train_monitor.finder.trial', run_name='__main__', alter_sys=True)\n"
    )
    return [sys.executable, "-c", bootstrap]


def stopped() -> UserError:
    """What a stopped search raises, between trials or during one."""
    return UserError(Message("the batch-size search was stopped"))


def end(proc: subprocess.Popen) -> None:
    """End `proc` now: SIGTERM, then SIGKILL when it has not gone within GRACE_S; reaped either way."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait()


def death_reason(code: int | None, stderr: str) -> Message:
    """Why a trial process ended without an answer: its signal or exit code, and its last line on stderr
    ('was killed by SIGSEGV; Fatal Python error: Segmentation fault'), in words the window already translates."""
    number = -code if code is not None and code < 0 else None
    if code is not None and code > 128 and _signal_name(code - 128) is not None:
        number = code - 128  # as a shell reports a signal
    if number is not None:
        how = Message("was killed by {signal}", signal=_signal_name(number) or str(number))
    else:
        how = Message("exited with code {code}", code=code)
    last = last_line(stderr)
    return how if last is None else Message("{first}; {second}", first=how, second=last)


def last_line(text: str) -> str | None:
    """The last non-blank line of `text`, None when there is none."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else None


def _signal_name(number: int) -> str | None:
    try:
        return signal.Signals(number).name
    except ValueError:
        return None


class Lines:
    """The lines a child writes on a pipe, read by a thread of their own so that a wait for the next one can
    give up every POLL_S to ask whether the search was stopped (a pipe cannot be waited on with a timeout
    everywhere: not on Windows). None marks the end of the output."""

    def __init__(self, stream: IO[str]) -> None:
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(stream,), name="trial-output", daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[str]) -> None:
        try:
            for line in stream:
                self._queue.put(line)
        except (OSError, ValueError):  # the stream was closed under us
            pass
        finally:
            self._queue.put(None)
            try:
                stream.close()  # here, not in another thread: closing a stream being read blocks on its lock
            except (OSError, ValueError):
                pass

    def next(self, timeout: float) -> str | None:
        """The next line; None at the end of the output. queue.Empty when none came within `timeout`."""
        return self._queue.get(timeout=timeout)


def out_of_memory_code(code: int | None) -> bool:
    """Whether an exit code says the trial ran out of memory: its own marker (3), or SIGKILL, which is what the
    kernel's out-of-memory killer sends (a process the search stopped never gets here)."""
    return code in OUT_OF_MEMORY_CODES
