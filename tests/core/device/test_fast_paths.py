"""The fast paths: each runs on the chosen device or is refused with the reason, before anything loads."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import torch

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.device.fast_paths import check_fast_paths, compile_problem
from gpu_train_monitor.engine.recipe import build_trainer
from tests.support.cli import cli_in_process

FAST = ["--device", "cpu", "--model", "tiny-cnn", "--synthetic-samples", "256", "--batch-size", "32"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """`gpu-train-monitor run ARGS` in this process: these tests are about what it prints, saves and refuses."""
    return cli_in_process("run", *args)


def refused(result: subprocess.CompletedProcess[str], option: str, *fragments: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1, result.stderr
    line = result.stderr.strip()
    assert line.startswith(f"gpu-train-monitor: error: {option}:"), line
    for fragment in fragments:
        assert fragment in line, line


def test_fp16_and_cudnn_benchmark_are_refused_on_the_cpu_with_the_reason() -> None:
    refused(run(*FAST, "--amp", "fp16"), "--amp", "fp16 needs a CUDA or MPS device")
    refused(run(*FAST, "--cudnn-benchmark"), "--cudnn-benchmark", "CUDA devices only")


def test_compile_without_a_cpu_compiler_is_refused_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    # Inductor reads $CXX once, at import: imported before the change, later compiles in this process keep g++
    import torch._inductor.config  # noqa: F401

    monkeypatch.setenv("CXX", "/nonexistent/c++")
    result = run(*FAST, "--compile")
    refused(result, "--compile", "needs a C++ compiler", "without compile")


def test_compile_runs_on_the_cpu_and_its_time_is_kept_out_of_images_per_s(tmp_path: Path) -> None:
    problem = compile_problem(torch.device("cpu"))
    if problem:  # the refusal is tested above; a machine without g++ cannot show the compiled path
        pytest.skip(problem)
    summary = tmp_path / "summary.json"
    try:
        result = run(
            *FAST, "--compile", "--max-steps", "12", "--report-interval", "0.01", "--summary-json", str(summary)
        )
    finally:
        torch._dynamo.reset()  # the compiled code lives in this process: later tests start without it
    assert result.returncode == 0, result.stderr
    data = json.loads(summary.read_text())
    assert data["status"] == "completed" and data["config"]["compile"] is True
    assert data["compile_s"] > 0.5  # Inductor compiled the step (seconds on a CPU, even from its cache)
    assert data["warmup_steps"] >= 1
    # images/s over the reports after the compiled first step: well above the average over the whole run
    assert data["samples_per_s"] > 2 * data["samples"] / data["wall_s"]
    assert "torch.compile compiled the model in" in result.stderr
    assert "after" in result.stdout and "s compiling" in result.stdout


def test_the_fused_optimizer_is_a_choice() -> None:
    config = RunConfig(device="cpu", model="tiny-cnn")
    check_fast_paths(config, torch.device("cpu"))  # torch has fused SGD and AdamW for the CPU
    fused = build_trainer(config, torch.device("cpu"), 3, 10)
    plain = build_trainer(config.replace(fused_optimizer=False), torch.device("cpu"), 3, 10)
    assert fused.optimizer.defaults["fused"] is True and not plain.optimizer.defaults["fused"]
    assert build_trainer(config.replace(compile=True), torch.device("cpu"), 3, 10).compiles
