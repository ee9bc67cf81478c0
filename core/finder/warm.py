"""The CPU's trial processes: one fresh process per trial (the search before predictions), or one process
for a whole search, kept warm: torch is imported once, not once per trial.

The child is `gpu_train_monitor.finder.trial` in its serving mode (see its module doc for how each trial's peak stays
its own). It never outlives this process: closing the search kills it, a stopped search ends it at once, mid-trial
(gpu_train_monitor.finder.child), and on Linux it asks the kernel for SIGKILL when its parent dies. Where the kernel
cannot reset a process's peak resident memory, or after a trial the child did not survive (the kernel's OOM killer),
the next trial starts a fresh child. A child that dies otherwise says how (its signal or exit code, its last error
line).
"""

from __future__ import annotations

import json
import queue
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import IO, Any

from ..base.errors import ConfigError, UserError
from ..base.text import Message, message_from_json
from ..config.run_config import RunConfig
from .child import POLL_S, Lines, death_reason, end, out_of_memory_code, stopped
from .child import trial_command as trial_command  # where callers have found it
from .trial import ANSWER

TRIAL_TIMEOUT_S = 3600


def measure_in_subprocess(
    config: RunConfig,
    batch_size: int,
    steps: int,
    should_stop: Callable[[], bool] | None = None,
    data_limit: int | None = None,
) -> int | None:
    """Run one trial as `gpu_train_monitor.finder.trial` in a fresh child process that never outlives this one.

    Two guards: the finally below ends the child whenever this call unwinds (Ctrl+C, the CLI's SIGTERM,
    an error, `should_stop()` turning true, asked every POLL_S); on Linux the child also asks the kernel for
    SIGKILL when its parent dies (PR_SET_PDEATHSIG, see `gpu_train_monitor.finder.child.trial_command`), which
    covers a SIGKILL of this process. `data_limit`: see `trial_command`."""
    request = json.dumps({"config": config.to_dict(), "batch_size": batch_size, "steps": steps})
    proc = subprocess.Popen(
        trial_command(data_limit), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        stdout, stderr = _communicate(proc, request, batch_size, should_stop)
    finally:
        if proc.poll() is None:
            end(proc)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    code = proc.returncode
    lines = stdout.strip().splitlines()
    if code != 0 or not lines:
        if out_of_memory_code(code) or "MemoryError" in stderr:
            return None  # the trial process ran out of memory (or the kernel's OOM killer ended it)
        raise _failed(batch_size, death_reason(code, stderr))
    answer = json.loads(lines[-1])
    if "user_error" in answer:  # bad input the trial met (your own model or dataset): as the run reports it
        raise trial_error(answer)
    return int(answer["peak_bytes"])


def _communicate(
    proc: subprocess.Popen, request: str, batch_size: int, should_stop: Callable[[], bool] | None
) -> tuple[str, str]:
    """The child's whole output, waited for in slices of POLL_S so that a stopped search ends it at once."""
    deadline = time.monotonic() + TRIAL_TIMEOUT_S
    given: str | None = request  # the input goes once: a retried communicate() carries on sending it
    while True:
        try:
            return proc.communicate(given, timeout=POLL_S)
        except subprocess.TimeoutExpired:
            given = None
        if should_stop is not None and should_stop():
            end(proc)
            raise stopped() from None
        if time.monotonic() > deadline:
            raise UserError(
                Message(
                    "the batch-size trial at {batch_size} took over an hour; try a smaller --max-batch",
                    batch_size=batch_size,
                )
            ) from None


def _failed(batch_size: int, reason: Message) -> UserError:
    return UserError(
        Message("the batch-size trial at {batch_size} failed: {error}", batch_size=batch_size, error=reason)
    )


def trial_error(answer: dict) -> UserError:
    """The bad input a trial process met (gpu_train_monitor.finder.trial's answer), as the run would have raised it: a
    ConfigError naming its field, else a UserError, with the message's template and values when it sent them."""
    field, text = answer.get("field"), answer["user_error"]
    said = message_from_json(answer.get("message"))
    if not isinstance(said, str):  # not sent, or not rebuilt: the English text, without the field's name
        said = text.removeprefix(f"{field}: ") if field else text
    return ConfigError(field, said) if field else UserError(said)


class WarmTrials:
    """`measure(config, batch_size, steps)` as `gpu_train_monitor.finder.search.measure_trial` answers it, every trial
    in the same child process; `idle_bytes(config)` what that process holds before a trial. Use as a context
    manager: leaving it ends the child.

    `should_stop()`, asked every POLL_S while the child works: once true, the child is ended at once (SIGTERM,
    SIGKILL after a short grace) and the search's "stopped" error raised. `data_limit`: see `trial_command`."""

    def __init__(self, should_stop: Callable[[], bool] | None = None, data_limit: int | None = None) -> None:
        self._should_stop = should_stop
        self._data_limit = data_limit
        self._proc: subprocess.Popen[str] | None = None
        self._lines: Lines | None = None
        self._stderr: IO[str] | None = None
        self._fresh_each_time = False  # the kernel cannot reset the child's peak: one child per trial

    def __enter__(self) -> WarmTrials:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the child (it holds nothing worth a grace) and let go of its pipes."""
        proc, self._proc, self._lines = self._proc, None, None
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stdin is not None:
                proc.stdin.close()  # stdout is closed by the thread that reads it (`Lines`)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def idle_bytes(self, config: RunConfig) -> int:
        """The child's resident memory after one step at batch 1 (torch, its thread pools, the model's code),
        remembered as what a CPU process holds of its own (`gpu_train_monitor.finder.budget.own_bytes`)."""
        from .budget import remember_own_bytes

        try:
            answer = self._ask({"idle": config.to_dict()})
        except _ChildFailed as failed:
            raise UserError(
                Message("the batch-size trial process failed to start: {error}", error=failed.reason)
            ) from None
        if answer is None:
            raise UserError(Message("the batch-size trial process ran out of memory at batch 1"))
        self._fresh_each_time = not answer.get("resettable", False)
        remember_own_bytes(int(answer["rss_bytes"]))
        return int(answer["rss_bytes"])

    def measure(self, config: RunConfig, batch_size: int, steps: int) -> int | None:
        """Peak bytes of `steps` real training steps at `batch_size` in the warm child; None when it ran out of
        memory. Bad input the trial met is raised as the run raises it."""
        if self._fresh_each_time:
            self.close()
        # the optimizer's state made up front (see gpu_train_monitor.finder.trial.run_trial): one real step where a
        # fresh process needs two, the first only to create that state
        request = {"config": config.to_dict(), "batch_size": batch_size, "steps": max(steps - 1, 1), "state": True}
        try:
            answer = self._ask(request)
        except _ChildFailed as failed:
            raise _failed(batch_size, failed.reason) from None
        if answer is None or answer.get("out_of_memory"):
            return None
        if "user_error" in answer:
            raise trial_error(answer)
        return int(answer["peak_bytes"])

    def _start(self) -> subprocess.Popen[str]:
        if self._proc is None:
            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
            self._proc = subprocess.Popen(
                trial_command(self._data_limit),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                text=True,
                bufsize=1,
            )
            assert self._proc.stdout is not None
            self._lines = Lines(self._proc.stdout)
            self._send({"serve": True})
        return self._proc

    def _send(self, request: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()

    def _ask(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The child's answer; None when the child died of running out of memory (a fresh one comes next)."""
        proc = self._start()
        lines = self._lines
        assert lines is not None
        try:
            self._send(request)
        except (BrokenPipeError, OSError):
            pass  # the child has died: its output ends, and says why
        while True:
            self._check_stop(proc)
            try:
                line = lines.next(POLL_S)
            except queue.Empty:
                continue
            if line is None:
                break
            answer = _answer(line)
            if answer is not None:
                return answer  # other lines: what your own model or dataset printed
        while proc.poll() is None:  # its output has ended: it is exiting
            self._check_stop(proc)
            try:
                proc.wait(POLL_S)
            except subprocess.TimeoutExpired:
                pass
        code = proc.returncode
        stderr = self._stderr_text()
        self.close()
        if out_of_memory_code(code) or "MemoryError" in stderr:
            return None  # the kernel's OOM killer, or an allocation Python could not recover from
        raise _ChildFailed(death_reason(code, stderr))

    def _check_stop(self, proc: subprocess.Popen[str]) -> None:
        """The search was stopped: the child ends now, and so does the wait for it."""
        if self._should_stop is not None and self._should_stop():
            end(proc)
            self.close()
            raise stopped()

    def _stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read()


def _answer(line: str) -> dict[str, Any] | None:
    if not line.startswith(ANSWER):
        return None
    try:
        answer = json.loads(line.removeprefix(ANSWER))
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


class _ChildFailed(Exception):
    """The trial process ended without an answer, not for lack of memory; `reason`: how, and its last words."""

    def __init__(self, reason: Message) -> None:
        super().__init__(reason)
        self.reason = reason
