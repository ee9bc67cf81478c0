"""The command line as a user runs it: as a fresh process (`python -m gpu_train_monitor ...`) where the process itself
is what a test is about (its exit, its signals, what it leaves behind), and in this process (`main([...])`, torch
already loaded: seconds faster) where only what it prints and its exit code matter; the small run its tests
use; and the one error line a user error must print."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys

FAST = ["--device", "cpu", "--model", "tiny-cnn", "--synthetic-samples", "256"]


def cli(*args: str, timeout: float = 120, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), capture_output=True, text=True, timeout=timeout, env=ENV, **kwargs)  # type: ignore[call-overload]


def cli_in_process(*args: str) -> subprocess.CompletedProcess[str]:
    """`gpu-train-monitor ARGS` run by `main()` in this process: its exit code and what it printed, as `cli` gives
    them (argparse's own errors exit through SystemExit, as they do in a process)."""
    from gpu_train_monitor.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 2
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())


def user_error_line(result: subprocess.CompletedProcess[str], *expected: str) -> str:
    """The one stderr line of a bad-input exit, checked to contain every `expected` fragment."""
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("gpu-train-monitor"), line
    assert "error" in line
    for fragment in expected:
        assert fragment in line, (fragment, line)
    assert "status" not in result.stdout  # no run summary for a run that never started
    return line


# One compute thread per child: the suite runs on small shared machines, where torch's threads would fight.
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "gpu_train_monitor", *args]
