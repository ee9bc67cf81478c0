"""The CPU's trial processes: one fresh process per trial (the search before predictions), or one process
for a whole search, kept warm: torch is imported once, not once per trial.

The child is `gpu_train_monitor.finder.trial` in its serving mode (see its module doc for how each trial's peak stays
its own). It never outlives this process: closing the search kills it, and on Linux it asks the kernel for
SIGKILL when its parent dies. Where the kernel cannot reset a process's peak resident memory, or after a
trial the child did not survive (the kernel's OOM killer), the next trial starts a fresh child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import IO, Any

from ..base.errors import ConfigError, UserError
from ..base.text import Message, message_from_json
from ..config.run_config import RunConfig


def trial_command() -> list[str]:
    """The Python command line that runs `gpu_train_monitor.finder.trial` in a child that dies with this process.

    The child sets PR_SET_PDEATHSIG itself, not through preexec_fn, which is unsafe in a process with
    threads (the window runs the finder in one)."""
    bootstrap = (
        "import ctypes, os, runpy, sys\n"
        "if sys.platform.startswith('linux'):\n"
        "    ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG = 1, SIGKILL = 9\n"
        f"    if os.getppid() != {os.getpid()}:  # the parent died before the line above ran\n"
        "        os._exit(1)\n"
        "runpy.run_module('gpu_train_monitor.finder.trial', run_name='__main__', alter_sys=True)\n"
    )
    return [sys.executable, "-c", bootstrap]


def measure_in_subprocess(config: RunConfig, batch_size: int, steps: int) -> int | None:
    """Run one trial as `gpu_train_monitor.finder.trial` in a fresh child process that never outlives this one.

    Two guards: the finally below kills the child whenever this call unwinds (Ctrl+C, the CLI's SIGTERM,
    an error); on Linux the child also asks the kernel for SIGKILL when its parent dies (PR_SET_PDEATHSIG,
    see `gpu_train_monitor.finder.warm.trial_command`), which covers a SIGKILL of this process."""
    request = json.dumps({"config": config.to_dict(), "batch_size": batch_size, "steps": steps})
    proc = subprocess.Popen(
        trial_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        stdout, stderr = proc.communicate(request, timeout=3600)
    except subprocess.TimeoutExpired:
        raise UserError(
            Message(
                "the batch-size trial at {batch_size} took over an hour; try a smaller --max-batch",
                batch_size=batch_size,
            )
        ) from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    proc = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    if proc.returncode != 0:
        if proc.returncode in (3, -9, 137) or "MemoryError" in proc.stderr:
            return None  # the trial process ran out of memory (or the kernel's OOM killer ended it)
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise UserError(
            Message("the batch-size trial at {batch_size} failed: {error}", batch_size=batch_size, error=last)
        )
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    if "user_error" in answer:  # bad input the trial met (your own model or dataset): as the run reports it
        raise trial_error(answer)
    return int(answer["peak_bytes"])


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
    manager: leaving it ends the child."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[str] | None = None
        self._stderr: IO[str] | None = None
        self._fresh_each_time = False  # the kernel cannot reset the child's peak: one child per trial

    def __enter__(self) -> WarmTrials:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def idle_bytes(self, config: RunConfig) -> int:
        """The child's resident memory after one step at batch 1 (torch, its thread pools, the model's code)."""
        try:
            answer = self._ask({"idle": config.to_dict()})
        except _ChildFailed as failed:
            raise UserError(
                Message("the batch-size trial process failed to start: {error}", error=failed.line)
            ) from None
        if answer is None:
            raise UserError(Message("the batch-size trial process ran out of memory at batch 1"))
        self._fresh_each_time = not answer.get("resettable", False)
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
            raise UserError(
                Message(
                    "the batch-size trial at {batch_size} failed: {error}", batch_size=batch_size, error=failed.line
                )
            ) from None
        if answer is None or answer.get("out_of_memory"):
            return None
        if "user_error" in answer:
            raise trial_error(answer)
        return int(answer["peak_bytes"])

    def _start(self) -> subprocess.Popen[str]:
        if self._proc is None:
            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
            self._proc = subprocess.Popen(
                trial_command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                text=True,
                bufsize=1,
            )
            self._send({"serve": True})
        return self._proc

    def _send(self, request: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()

    def _ask(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The child's answer; None when the child died of running out of memory (a fresh one comes next)."""
        proc = self._start()
        try:
            self._send(request)
            while proc.stdout is not None and (line := proc.stdout.readline()):
                answer = _answer(line)
                if answer is not None:
                    return answer  # other lines: what your own model or dataset printed
        except (BrokenPipeError, OSError):
            pass
        code = proc.wait()
        stderr = self._stderr_text()
        self.close()
        if code in (3, -9, 137) or "MemoryError" in stderr:
            return None  # the kernel's OOM killer, or an allocation Python could not recover from
        raise _ChildFailed((stderr.strip().splitlines() or ["no message"])[-1])

    def _stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read()


def _answer(line: str) -> dict[str, Any] | None:
    from .trial import ANSWER

    if not line.startswith(ANSWER):
        return None
    try:
        answer = json.loads(line.removeprefix(ANSWER))
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


class _ChildFailed(Exception):
    """The trial process ended with an error of its own; `line`: the last line it wrote on stderr."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line
