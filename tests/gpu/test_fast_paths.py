"""The fast paths on a CUDA GPU: each one runs, and the speed-run preset and a CPU vs GPU comparison work.
Marked `gpu`: skipped without a CUDA device (the CPU side of each path is tested in test_fast_paths.py)."""

from __future__ import annotations

import pytest
import torch

from gpu_train_monitor.compare.comparison import Comparison
from gpu_train_monitor.config.presets import preset
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.session import TrainingSession

pytestmark = pytest.mark.gpu

BASE = RunConfig(
    device="cuda:0", model="resnet18", synthetic_samples=4096, batch_size=256, max_steps=12, report_interval=0.05
)


@pytest.mark.parametrize(
    "changes",
    [
        {"amp": "bf16", "channels_last": True, "placement": "resident"},
        {"amp": "fp16", "fused_optimizer": True},
        {"amp": "fp16", "fused_optimizer": False},
        {"cudnn_benchmark": True},
        {"compile": True, "amp": "bf16"},
    ],
)
def test_each_fast_path_trains_on_cuda(changes: dict) -> None:
    finished = TrainingSession(BASE.replace(**changes)).run()
    assert finished.status == "completed", finished.message
    assert finished.summary.loss_last < finished.summary.loss_first
    if changes.get("compile"):
        assert finished.summary.compile_s is not None and finished.summary.compile_s > 0
    if changes.get("cudnn_benchmark"):
        assert torch.backends.cudnn.benchmark is True


def test_the_speedrun_preset_trains_on_cuda() -> None:
    config = preset("speedrun").apply(RunConfig(device="cuda:0", max_steps=40), "cuda")
    finished = TrainingSession(config).run()
    assert finished.status == "completed", finished.message
    assert finished.summary.config["model"] == "speedrun-net" and finished.summary.compile_s is not None
    assert finished.summary.loss_last < 0.8 * finished.summary.loss_first


def test_cpu_vs_gpu_comparison_has_the_gpu_faster() -> None:
    base = RunConfig(model="tiny-cnn", synthetic_samples=4096, batch_size=256, max_steps=12, report_interval=0.05)
    result = Comparison(base, [{"device": "cpu"}, {"device": "cuda:0"}]).run()
    assert result.status == "completed", result.headline
    assert result.fastest == 1 and result.speedup is not None and result.speedup > 1
    assert result.headline.startswith("cuda:0 trains tiny-cnn")
