"""Ctrl+C, SIGTERM and a closed stdout: the CLI exits with the documented code and never a traceback.

Each test starts `python -m gpu_train_monitor ...` and signals it once it has printed the line that shows where it
is (waiting on output, not on sleeps); every wait is bounded.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.support.processes import ENV, WAIT_S, finish, start, wait_for_line

FAST = ["--device", "cpu", "--model", "tiny-cnn", "--synthetic-samples", "256", "--batch-size", "32"]
LONG = ["--device", "cpu", "--model", "tiny-cnn", "--synthetic-samples", "2560", "--batch-size", "8"]


# --- SIGTERM --------------------------------------------------------------------------------------------


def test_sigterm_stops_a_run_like_stop_with_its_summary_and_exit_143(tmp_path: Path, processes: list) -> None:
    target = tmp_path / "summary.json"
    process = start("run", *LONG, "--summary-json", str(target))
    processes.append(process)
    wait_for_line(process, r"^training tiny-cnn on cpu")  # the run's handlers are installed
    process.send_signal(signal.SIGTERM)
    stdout, stderr = finish(process)
    assert process.returncode == 143, stderr
    assert "Traceback" not in stderr
    assert "status      stopped" in stdout
    summary = json.loads(target.read_text(encoding="utf-8"))
    assert summary["status"] == "stopped" and summary["steps"] < 2560 // 8


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_stopping_the_finder_ends_its_trial_process(processes: list, signum: int) -> None:
    process = start("find-batch-size", *FAST, "--capacity", "1TB")
    processes.append(process)
    wait_for_line(process, r"^searching on cpu")
    parent = psutil.Process(process.pid)
    deadline = time.monotonic() + WAIT_S
    children: list[psutil.Process] = []
    while not children and time.monotonic() < deadline:  # the first trial's process
        children = parent.children(recursive=True)
        time.sleep(0.05)
    assert children, "no trial process was started"
    process.send_signal(signum)  # to the finder only, as `kill` does (a terminal's Ctrl+C reaches both)
    _, stderr = finish(process)
    assert process.returncode == (143 if signum == signal.SIGTERM else 130), stderr
    assert "Traceback" not in stderr
    gone, alive = psutil.wait_procs(children, timeout=30)
    assert alive == [], "the trial process outlived the finder"


# --- Ctrl+C ---------------------------------------------------------------------------------------------


def test_ctrl_c_while_torch_is_importing_exits_130_quietly(processes: list) -> None:
    # -X importtime prints a line as each module finishes importing: a torch submodule done means
    # torch itself is still importing
    process = start("run", *FAST, "--max-steps", "2", python_options=("-X", "importtime"))
    processes.append(process)
    wait_for_line(process, r"\|\s+torch\.")
    process.send_signal(signal.SIGINT)
    stdout, stderr = finish(process)
    assert process.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert "status" not in stdout


def test_a_second_ctrl_c_aborts_the_run_with_130_and_no_traceback(processes: list) -> None:
    process = start("run", *LONG)
    processes.append(process)
    wait_for_line(process, r"^training tiny-cnn on cpu")
    process.send_signal(signal.SIGINT)
    wait_for_line(process, r"stopping at the next step")
    process.send_signal(signal.SIGINT)
    stdout, stderr = finish(process)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr


# --- a closed stdout ------------------------------------------------------------------------------------


def _closed_pipe() -> int:
    """The write end of a pipe whose reader has gone, as `| true` leaves it."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    return write_end


@pytest.mark.parametrize("command", [["models"], ["devices", "--json"], ["run", *FAST, "--max-steps", "2"]])
def test_a_reader_that_left_is_exit_1_without_a_traceback(command: list[str]) -> None:
    write_end = _closed_pipe()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "gpu_train_monitor", *command],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=WAIT_S,
            env=ENV,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
    assert "BrokenPipeError" not in result.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("command", [["models"], ["devices", "--json"]])
def test_stdout_on_a_full_disk_is_one_line_and_exit_1(command: list[str]) -> None:
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "gpu_train_monitor", *command],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=WAIT_S,
            env=ENV,
        )
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == ["gpu-train-monitor: error: cannot write to stdout (No space left on device)"]
