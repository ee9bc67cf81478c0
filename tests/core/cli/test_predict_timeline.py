"""`gpu-train-monitor predict --timeline`: the step's memory over time, its moments as text and every point in the
JSON, for tiny-cnn predicted for real."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import cli_in_process

HOLDERS = ("params_bytes", "grads_bytes", "optimizer_bytes", "batch_bytes", "activations_bytes", "temporaries_bytes")


def test_timeline_prints_the_phase_ends_and_saves_every_point(tmp_path: Path) -> None:
    target = tmp_path / "predicted.json"
    result = cli_in_process(
        "predict", "--device", "cpu", "--model", "tiny-cnn", "--batch-size", "8", "--capacity", "8GB",
        "--timeline", "--json", str(target),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("step timeline at batch 8 (")))
    moments = [line.split()[0] for line in lines[start + 2 : start + 8] if line.startswith("  ")]
    assert moments[0] == "start" and "peak" in moments
    assert [moment for moment in moments if moment not in ("start", "peak")] == ["forward", "backward", "optimizer"]
    (prediction,) = json.loads(target.read_text(encoding="utf-8"))["predictions"]
    points = prediction["timeline"]
    assert len(points) > 10 and [p["index"] for p in points] == sorted(p["index"] for p in points)
    assert all(p["total_bytes"] == sum(p[key] for key in HOLDERS) for p in points)
    assert max(p["total_bytes"] for p in points) == prediction["peak_bytes"]
    phases = [p["phase"] for p in points]
    assert phases[0] == "forward" and "backward" in phases
    assert phases == sorted(phases, key=["forward", "backward", "optimizer"].index)
    assert points[-1]["grads_bytes"] > 0 and points[0]["grads_bytes"] == 0
