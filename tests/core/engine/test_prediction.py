"""A run's memory predicted from its settings (gpu_train_monitor.engine.prediction): the step a run trains, traced on
fake tensors, against the same step run for real on the CPU and counted the same way (within 10%), for our models
and a vision transformer, in fp32 and bf16 autocast at three batch sizes each. tiny-cnn's real steps take a
moment; the others' are marked slow (resnet18's bf16 steps take tens of seconds on a laptop CPU).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import measure, predict
from gpu_train_monitor.memory.predict import PredictionUnavailable
from gpu_train_monitor.model.models import build_model
from tests.support.user_code import importable_folder, write_module

CONFIG = RunConfig(device="cpu", dataset="synthetic", model="tiny-cnn", batch_size=64)
VIT = '''
import torch
from torchvision.models.vision_transformer import VisionTransformer


def small_vit(num_classes):
    """torchvision's ViT with small dimensions: 64 patches of 4x4 pixels, 4 encoder layers."""
    return VisionTransformer(image_size=32, patch_size=4, num_layers=4, num_heads=4, hidden_dim=128, mlp_dim=256,
                             num_classes=num_classes)


def picks_positive(num_classes):
    """Keeps the images whose first pixel is positive: how many depends on the values."""
    class PicksPositive(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(3 * 32 * 32, num_classes)

        def forward(self, x):
            flat = x.flatten(1)
            return self.linear(flat[torch.nonzero(flat[:, 0] > 0).flatten()].sum(0, keepdim=True) + flat)
    return PicksPositive()
'''


@pytest.fixture
def own_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = importable_folder(tmp_path, monkeypatch)
    write_module(next(folder), "vits", VIT)
    yield tmp_path
    next(folder, None)


def check_close(model: str, amp: str, batch: int) -> None:
    predicted = predict(CONFIG, batch, model=model, amp=amp)
    measured = measure(CONFIG, batch, model=model, amp=amp)
    error = predicted.peak_bytes / measured.peak_bytes - 1
    print(
        f"{model:>14} {amp:>4} batch {batch:>4}: predicted {predicted.peak_bytes:>12,} B, measured "
        f"{measured.peak_bytes:>12,} B, error {error:+.3%}"
    )
    assert abs(error) <= 0.10, f"{model} {amp} batch {batch}: predicted {predicted}, measured {measured}"
    assert predicted.params_bytes == measured.params_bytes
    assert predicted.batch_bytes == measured.batch_bytes


SLOW = pytest.mark.slow  # bf16 convolutions are slow on a CPU without bf16 units: seconds per real step


@pytest.mark.parametrize(
    ("batch", "amp"),
    [
        (8, "off"),
        (32, "off"),
        (128, "off"),
        (8, "bf16"),
        pytest.param(32, "bf16", marks=SLOW),
        pytest.param(128, "bf16", marks=SLOW),
    ],
)
def test_tiny_cnn_prediction_is_within_10_percent_of_its_measured_step(batch: int, amp: str) -> None:
    check_close("tiny-cnn", amp, batch)


@pytest.mark.slow
@pytest.mark.parametrize("amp", ["off", "bf16"])
@pytest.mark.parametrize(
    ("model", "batch"), [("resnet18", b) for b in (2, 4, 8)] + [("speedrun-net", b) for b in (8, 16, 32)]
)
def test_our_models_predictions_are_within_10_percent_of_their_measured_steps(model: str, batch: int, amp: str) -> None:
    check_close(model, amp, batch)


@pytest.mark.slow
@pytest.mark.parametrize("amp", ["off", "bf16"])
@pytest.mark.parametrize("batch", [8, 32, 64])
def test_a_vision_transformer_prediction_is_within_10_percent_of_its_measured_step(
    own_models: Path, batch: int, amp: str
) -> None:
    check_close("vits:small_vit", amp, batch)


def test_a_gpu_this_machine_lacks_is_predicted_with_the_settings_a_run_there_uses() -> None:
    predicted = predict(CONFIG, 4096, device="cuda", model="resnet18", amp="bf16", optimizer="adamw")
    assert predicted.device_kind == "cuda"
    assert predicted.what == "resnet18 at batch 4096 (bf16 autocast, adamw) on cuda"
    weights = sum(p.numel() for p in build_model("resnet18", 10, 3).parameters()) * 4
    assert 2 * weights <= predicted.optimizer_bytes <= 2 * weights + 1024  # Adam's two moments, its step counters
    assert predicted.peak_bytes > 8 * 10**9  # the activations of 4096 images: far beyond this machine
    half = predict(CONFIG, 2048, device="cuda", model="resnet18", amp="bf16", optimizer="adamw")
    assert 1.9 < predicted.activations_bytes / half.activations_bytes < 2.1


def test_bf16_autocast_and_sgd_are_predicted_to_need_less_than_fp32_and_adamw() -> None:
    fp32 = predict(CONFIG, 64, model="speedrun-net", optimizer="adamw")
    assert predict(CONFIG, 64, model="speedrun-net", optimizer="adamw", amp="bf16").peak_bytes < fp32.peak_bytes
    assert predict(CONFIG, 64, model="speedrun-net", optimizer="sgd").peak_bytes < fp32.peak_bytes


def test_an_unknown_model_is_a_config_error_not_an_unavailable_prediction() -> None:
    with pytest.raises(ConfigError, match="unknown model"):
        predict(CONFIG, model="no_such_net")


def test_your_own_model_with_data_dependent_shapes_is_unavailable_with_the_reason(own_models: Path) -> None:
    with pytest.raises(PredictionUnavailable) as caught:
        predict(CONFIG, 8, model="vits:picks_positive")
    reason = caught.value.reason
    assert "vits:picks_positive at batch 8" in reason and "cannot be predicted without running it" in reason
    assert "nonzero" in reason and "real trial steps measure it instead" in reason


@pytest.mark.slow
def test_resnet18_at_batch_256_is_predicted_in_under_2_seconds_after_warm_up() -> None:
    config = CONFIG.replace(model="resnet18", batch_size=256)
    predict(config)
    times = []
    for _ in range(3):
        started = time.perf_counter()
        predict(config)
        times.append(time.perf_counter() - started)
    print(f"resnet18 batch 256 prediction: {min(times):.2f} s (best of 3), {max(times):.2f} s (worst)")
    assert min(times) < 2.0
