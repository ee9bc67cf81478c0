"""Activation checkpointing: the same training with less held for backward, or a clear refusal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.recipe import build_trainer
from gpu_train_monitor.memory.breakdown import StepMemoryRecorder
from gpu_train_monitor.memory.probe import MemoryProbe
from gpu_train_monitor.model.activation_checkpointing import check_checkpointable, checkpoint_blocks, find_blocks
from gpu_train_monitor.model.models import build_model
from tests.support.user_code import importable_folder

CPU = torch.device("cpu")


@pytest.fixture
def user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from importable_folder(tmp_path, monkeypatch)


def train(model: str, checkpointing: bool, steps: int, side: int, batch: int = 4) -> tuple[list[float], dict, int]:
    """The losses of `steps` steps on one fixed batch, the model's state after, and the last step's activation
    bytes as the CPU's breakdown counts them."""
    torch.manual_seed(0)
    config = RunConfig(device="cpu", model=model, batch_size=batch, activation_checkpointing=checkpointing)
    trainer = build_trainer(config, CPU, 3, 10)
    generator = torch.Generator().manual_seed(1)
    images = torch.randn(batch, 3, side, side, generator=generator)
    labels = torch.randint(0, 10, (batch,), generator=generator)
    recorder = StepMemoryRecorder(MemoryProbe(CPU))
    losses = []
    for _ in range(steps):
        with recorder.step():
            losses.append(trainer.step(images, labels, recorder).item())
    activations = recorder.breakdown(steps, trainer.model, trainer.optimizer, images, labels).activations_bytes
    return losses, trainer.model.state_dict(), activations


@pytest.mark.parametrize(("model", "steps", "side"), [("tiny-cnn", 3, 32), ("resnet18", 2, 16)])
def test_checkpointing_trains_the_same_losses_and_model_with_less_held(model: str, steps: int, side: int) -> None:
    plain_losses, plain_state, plain_bytes = train(model, False, steps, side)
    losses, state, held = train(model, True, steps, side)
    assert losses == pytest.approx(plain_losses, rel=1e-5)
    assert list(state) == list(plain_state)  # the same state_dict keys: checkpoints load either way
    for key, value in plain_state.items():  # BatchNorm's running statistics too: not updated twice
        assert torch.allclose(state[key].float(), value.float(), rtol=1e-4, atol=1e-6), key
    assert 0 < held < 0.8 * plain_bytes


def test_blocks_are_the_stages_and_groups_of_each_kind_of_model() -> None:
    with torch.device("meta"):
        models = {name: build_model(name, 10, 3) for name in ("tiny-cnn", "resnet18", "speedrun-net", "vit_b_16")}
    resnet = models["resnet18"]
    assert find_blocks(resnet).whole == [resnet.layer1, resnet.layer2, resnet.layer3, resnet.layer4]
    assert find_blocks(models["tiny-cnn"]).whole == list(models["tiny-cnn"].features)
    assert len(find_blocks(models["speedrun-net"])) == 4  # the stem and its three groups
    assert len(find_blocks(models["vit_b_16"])) == 12  # the encoder's layers


def test_validation_runs_the_blocks_without_checkpointing() -> None:
    torch.manual_seed(0)
    model = build_model("tiny-cnn", 10, 3)
    images = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        expected = model.eval()(images)
    checkpoint_blocks(model, "tiny-cnn")
    with torch.no_grad():
        assert torch.equal(model(images), expected)


def test_a_model_without_blocks_is_refused_naming_the_option() -> None:
    with torch.device("meta"):
        model = build_model("googlenet", 10, 3)
    with pytest.raises(ConfigError, match="googlenet has no blocks to checkpoint") as caught:
        checkpoint_blocks(model, "googlenet")
    assert caught.value.field == "activation_checkpointing"
    with pytest.raises(ConfigError, match="no blocks to checkpoint"):  # before any run: compare asks this
        check_checkpointable(RunConfig(model="inception_v3", activation_checkpointing=True))
    check_checkpointable(RunConfig(model="auto", activation_checkpointing=True), "cuda")  # resnet18 has stages


def test_your_own_model_without_blocks_is_refused_and_one_with_blocks_is_checkpointed(user_folder: Path) -> None:
    with pytest.raises(ConfigError, match="mymodels:small_net has no blocks to checkpoint"):
        build_trainer(RunConfig(device="cpu", model="mymodels:small_net", activation_checkpointing=True), CPU, 3, 10)
    (user_folder / "stages.py").write_text(
        "from torch import nn\n"
        "def net(num_classes):\n"
        "    stage = lambda cin, cout: nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU())\n"
        "    return nn.Sequential(stage(3, 8), stage(8, 8), nn.AdaptiveAvgPool2d(1), nn.Flatten(),\n"
        "                         nn.Linear(8, num_classes))\n",
        encoding="utf-8",
    )
    trainer = build_trainer(RunConfig(device="cpu", model="stages:net", activation_checkpointing=True), CPU, 3, 10)
    assert len(find_blocks(trainer.model)) == 2
    loss = trainer.step(torch.randn(2, 3, 8, 8), torch.tensor([0, 1]))
    assert torch.isfinite(loss)
