"""`gpu-train-monitor compare` as a user runs it, in this process (`main`, as `python -m gpu_train_monitor compare ...`
would print and exit): two CPU configurations end to end, the JSON's ratio and bad overrides. Ctrl+C, a signal to
the process, is in tests/e2e/test_ctrl_c.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import cli_in_process

FAST = [
    "--device",
    "cpu",
    "--model",
    "tiny-cnn",
    "--synthetic-samples",
    "256",
    "--batch-size",
    "32",
    "--report-interval",
    "0.01",
]


def compare(*args: str) -> subprocess.CompletedProcess[str]:
    return cli_in_process("compare", *args)


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_two_cpu_configurations_race_and_the_ratio_is_their_throughputs(tmp_path: Path) -> None:
    out = tmp_path / "compare.json"
    result = compare(
        "--vs", "channels_last=false", "--vs", "channels_last=true", *FAST, "--max-steps", "16", "--json", str(out)
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    data = json.loads(out.read_text())
    runs = data["runs"]
    assert [r["overrides"] for r in runs] == [{"channels_last": False}, {"channels_last": True}]
    assert [r["status"] for r in runs] == ["completed", "completed"]
    rates = [r["samples_per_s"] for r in runs]
    assert all(rate > 0 for rate in rates)
    for run in runs:
        lo, hi = run["samples_per_s_spread"]
        assert 0 < lo <= hi and run["warmup_steps"] >= 1 and run["steps"] == 16
        assert run["loss_last"] > 0 and run["compile_s"] is None
    assert data["speedup"] == pytest.approx(max(rates) / min(rates))
    assert data["fastest"] == rates.index(max(rates))
    # same seed, same data order, only the memory format differs: the losses must agree, and it says so
    assert data["losses_agree"] is True
    assert data["headline"] in result.stdout
    if data["clear_difference"]:  # a busy machine often gives overlapping spreads: then no winner is named
        assert "warm-up excluded" in data["headline"]
    else:
        assert data["headline"].startswith("no clear difference between ")
    assert "channels_last" in result.stdout and "no channels_last" in result.stdout


def test_an_override_that_does_not_parse_is_one_line_naming_it() -> None:
    line = one_error_line(compare("--vs", "device=cpu", "--vs", "batchsize=64", *FAST))
    assert line.startswith("gpu-train-monitor: error: --vs:") and "'batchsize=64'" in line and "unknown setting" in line
    line = one_error_line(compare("--vs", "workers=1", "--vs", "workers=99", *FAST))
    assert "'workers=99'" in line and "0 to 64" in line
    line = one_error_line(compare("--vs", "amp=off", *FAST))
    assert "2 to 4" in line


def test_a_configuration_the_machine_cannot_run_is_refused_before_any_run(tmp_path: Path) -> None:
    line = one_error_line(compare("--vs", "amp=off", "--vs", "amp=fp16", *FAST))
    assert "configuration 2 (amp fp16)" in line and "--amp" in line and "fp16" in line
    line = one_error_line(compare("--vs", "device=cpu", "--vs", "device=cuda:7", *FAST))
    assert "configuration 2 (cuda:7)" in line and "--device" in line and "not available" in line


def test_the_table_gives_no_ratio_column_for_a_difference_within_the_noise() -> None:
    from gpu_train_monitor.cli.compare_command import comparison_table
    from gpu_train_monitor.compare.plan import plan
    from gpu_train_monitor.compare.result import ContenderResult, conclude
    from gpu_train_monitor.config.run_config import RunConfig

    def run(index: int, label: str, rate: float, spread: tuple[float, float]) -> ContenderResult:
        return ContenderResult(index, label, {}, "completed", rate, spread, 2.0, 5, None, 1.0, 60, "", (2.0,), 10)

    contenders = plan(
        RunConfig(device="cpu", batch_size=32, max_steps=60), [{"placement": "stream"}, {"placement": "resident"}]
    )
    result = conclude(
        contenders,
        [run(0, "stream", 128.0, (74.0, 182.0)), run(1, "resident", 112.0, (80.0, 155.0))],
        60,
        "tiny-cnn",
        False,
    )
    table = comparison_table(result)
    assert "1.14x" not in table.replace("1.14x is within the noise", "")  # no winner's ratio in the column
    assert table.splitlines()[-1].startswith("no clear difference between stream and resident")


def test_a_ready_made_comparison_by_name_races_what_the_window_s_menu_offers(tmp_path: Path) -> None:
    from gpu_train_monitor.compare.plan import ready_comparisons
    from gpu_train_monitor.config.run_config import RunConfig

    out = tmp_path / "ready.json"
    result = compare("--ready", "Stream  vs resident", *FAST, "--max-steps", "6", "--json", str(out))
    assert result.returncode == 0, result.stderr
    (offered,) = [c for c in ready_comparisons(RunConfig(device="cpu"), None, False) if c.name == "stream vs resident"]
    assert [r["overrides"] for r in json.loads(out.read_text())["runs"]] == [dict(o) for o in offered.overrides]


def test_a_ready_made_comparison_not_offered_here_is_one_line_saying_why() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU: expandable segments are offered (tests/gpu)")
    line = one_error_line(compare("--ready", "expandable segments off vs on", *FAST))
    assert line.startswith("gpu-train-monitor: error: --ready: 'expandable segments off vs on' needs a CUDA GPU: ")
    assert line.endswith("a setting of CUDA's caching allocator, and this machine has no CUDA GPU")
    line = one_error_line(compare("--ready", "fastest", *FAST))
    assert "no ready-made comparison 'fastest' here; this machine offers: " in line and "'stream vs resident'" in line
    line = one_error_line(compare("--ready", "stream vs resident", "--vs", "amp=off", "--vs", "amp=bf16", *FAST))
    assert line == "gpu-train-monitor: error: --ready: give a ready-made comparison or --vs lines, not both"
