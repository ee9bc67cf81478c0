"""`gpu-train-monitor run` and `compare` stopped by Ctrl+C: a real SIGINT to a real process, which exits 130,
prints no traceback and still writes its JSON."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.cli import ENV, FAST
from tests.support.processes import finish, start, wait_for_line


def test_ctrl_c_stops_the_comparison_and_skips_the_rest(tmp_path: Path, processes: list) -> None:  # noqa: F811 - the fixture
    out = tmp_path / "stopped.json"
    process = start(
        "compare",
        "--vs",
        "placement=stream",
        "--vs",
        "placement=resident",
        "--device",
        "cpu",
        "--model",
        "tiny-cnn",
        "--synthetic-samples",
        "2560",
        "--batch-size",
        "8",
        "--max-steps",
        "100000",
        "--json",
        str(out),
    )
    processes.append(process)
    wait_for_line(process, r"^training tiny-cnn on cpu")
    process.send_signal(signal.SIGINT)
    stdout, stderr = finish(process)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    data = json.loads(out.read_text())
    assert data["status"] == "stopped" and [r["status"] for r in data["runs"]] == ["stopped"]
    assert data["speedup"] is None and "no ratio" in data["headline"]


def test_ctrl_c_stops_the_run_cleanly_with_exit_130(tmp_path: Path) -> None:
    target = tmp_path / "summary.json"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gpu_train_monitor",
            "run",
            *FAST,
            "--synthetic-samples",
            "2560",
            "--batch-size",
            "8",
            "--summary-json",
            str(target),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        assert process.stderr is not None
        lines = []
        while not lines or (lines[-1] and not lines[-1].startswith("training ")):  # skip any import warnings
            lines.append(process.stderr.readline())
        # printed once the run has started, so the Ctrl+C handler is installed
        assert lines[-1].startswith("training tiny-cnn on cpu"), lines
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "stopping at the next step" in stderr
    assert "status      stopped" in stdout
    summary = json.loads(target.read_text(encoding="utf-8"))
    assert summary["status"] == "stopped"
    assert summary["steps"] < 2560 // 8
