"""Presets: named sets of overrides, listed by the CLI, applied under explicit options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.config.presets import PRESETS, preset
from gpu_train_monitor.config.run_config import RunConfig
from tests.support.cli import cli_in_process as cli  # what it prints and returns: no fresh interpreter needed


def test_the_speedrun_preset_is_every_fast_path_on_a_gpu_and_fp32_eager_on_a_cpu() -> None:
    gpu = preset("speedrun").apply(RunConfig(), "cuda")
    assert (gpu.model, gpu.placement, gpu.amp, gpu.channels_last, gpu.compile, gpu.fused_optimizer) == (
        "speedrun-net",
        "resident",
        "bf16",
        True,
        True,
        True,
    )
    cpu = preset("speedrun").apply(RunConfig(), "cpu")
    assert (cpu.model, cpu.placement, cpu.amp, cpu.compile) == ("speedrun-net", "resident", "off", False)
    with pytest.raises(ConfigError, match="unknown preset 'fastest'"):
        preset("fastest")


def test_presets_are_listed() -> None:
    result = cli("presets")
    assert result.returncode == 0
    for name, value in PRESETS.items():
        assert f"{name}: {value.description}" in result.stdout
    assert "model=speedrun-net" in result.stdout and "on a CPU: amp=off, compile=false" in result.stdout


def test_the_speedrun_preset_trains_on_the_cpu_and_its_loss_falls(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    result = cli(
        "run",
        "--preset",
        "speedrun",
        "--device",
        "cpu",
        "--synthetic-samples",
        "256",
        "--batch-size",
        "32",
        "--max-steps",
        "16",
        "--summary-json",
        str(summary),
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(summary.read_text())
    config = data["config"]
    assert (config["model"], config["placement"], config["channels_last"], config["batch_size"]) == (
        "speedrun-net",
        "resident",
        True,
        32,
    )  # the explicit batch size wins over the preset's 1024
    assert data["status"] == "completed"
    assert data["loss_last"] < 0.7 * data["loss_first"]


def test_an_unknown_preset_is_one_line() -> None:
    result = cli("run", "--preset", "fastest", "--device", "cpu")
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("gpu-train-monitor: error: --preset: unknown preset 'fastest'; known: speedrun")


def test_the_default_model_fits_the_machine(tmp_path: Path) -> None:
    """Without --model, a CPU trains the small model (resnet18 takes minutes per epoch on 2 cores)."""
    summary = tmp_path / "summary.json"
    result = cli(
        "run",
        "--device",
        "cpu",
        "--synthetic-samples",
        "256",
        "--batch-size",
        "32",
        "--max-steps",
        "2",
        "--summary-json",
        str(summary),
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(summary.read_text())["config"]["model"] == "tiny-cnn"
    assert "training tiny-cnn on cpu" in result.stderr
