"""The CLI as a process of its own session, waited on by the lines it prints, and finished without leaving
anything running."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import psutil


def start(*args: str, python_options: tuple[str, ...] = (), **kwargs: object) -> subprocess.Popen[str]:
    kwargs = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kwargs}
    return subprocess.Popen(
        [sys.executable, *python_options, "-m", "gpu_train_monitor", *args], text=True, env=ENV, **kwargs
    )  # type: ignore[call-overload]


def wait_for_line(process: subprocess.Popen[str], pattern: str) -> list[str]:
    """stderr lines up to and including the first that matches `pattern` (fails at EOF)."""
    assert process.stderr is not None
    lines: list[str] = []
    while True:
        line = process.stderr.readline()
        assert line, f"exited before {pattern!r}: {''.join(lines[-20:])}"
        lines.append(line)
        if re.search(pattern, line):
            return lines


def finish(process: subprocess.Popen[str]) -> tuple[str, str]:
    stdout, stderr = process.communicate(timeout=WAIT_S)
    return stdout or "", stderr


ENV = {**os.environ, "OMP_NUM_THREADS": "1"}

WAIT_S = 180


def left_alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those of `processes` still running (a zombie, ended but not yet reaped, is not)."""
    alive = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
        except psutil.Error:
            continue
    return alive


def gone(pid: int, within_s: float = 2.0) -> bool:
    """Whether process `pid` is gone (a zombie waiting for its reaper is) within `within_s`."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            if not left_alive([psutil.Process(pid)]):
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def pid_in(path: Path, process: subprocess.Popen[str] | None = None, timeout: float = 60) -> int:
    """The pid a shell wrote to `path` (a child it started), once written; fails when `process` ends first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and (process is None or process.poll() is None):
        text = path.read_text().strip() if path.exists() else ""
        if text:
            return int(text)
        time.sleep(0.02)
    raise AssertionError(f"no pid written to {path}")
