"""`gpu-train-monitor compare` stopped by Ctrl+C: a real SIGINT to a real process, which exits 130 and still
writes its JSON."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from tests.support.processes import finish, start, wait_for_line


def test_ctrl_c_stops_the_comparison_and_skips_the_rest(tmp_path: Path,
                                                         processes: list) -> None:  # noqa: F811 - the fixture
    out = tmp_path / "stopped.json"
    process = start("compare", "--vs", "placement=stream", "--vs", "placement=resident", "--device", "cpu",
                    "--model", "tiny-cnn", "--synthetic-samples", "2560", "--batch-size", "8", "--max-steps", "100000",
                    "--json", str(out))
    processes.append(process)
    wait_for_line(process, r"^training tiny-cnn on cpu")
    process.send_signal(signal.SIGINT)
    stdout, stderr = finish(process)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    data = json.loads(out.read_text())
    assert data["status"] == "stopped" and [r["status"] for r in data["runs"]] == ["stopped"]
    assert data["speedup"] is None and "no ratio" in data["headline"]
