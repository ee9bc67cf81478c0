"""Models by name: ours (tiny-cnn, resnet18 with a CIFAR stem), torchvision's, and your own from a
`module:factory` spec (written by the test into its folder), always freshly initialised."""

from __future__ import annotations

import socket

import pytest
import torch
from torch import nn

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.model.models import (
    ModelSpec,
    TinyCNN,
    available_models,
    build_model,
    count_parameters,
    model_spec,
    resolve_model,
)
from gpu_train_monitor.model.user_models import check_output
from tests.support.user_code import importable_folder


@pytest.fixture
def folder(tmp_path, monkeypatch):
    yield from importable_folder(tmp_path, monkeypatch)


@pytest.mark.parametrize("name", ["tiny-cnn", "resnet18"])
@pytest.mark.parametrize("channels", [1, 3])
def test_our_models_classify_32px_images_with_the_data_channels(name: str, channels: int) -> None:
    spec = model_spec(name, channels)
    assert spec == ModelSpec(in_channels=channels, input_size=None)  # 28/32 px go in as they are
    model = build_model(name, num_classes=10, in_channels=channels)
    logits = model(torch.randn(2, channels, 32, 32))
    assert logits.shape == (2, 10)
    assert torch.isfinite(logits).all()


def test_resnet18_has_the_cifar_stem() -> None:
    model = build_model("resnet18", 10, 3)
    assert model.conv1.kernel_size == (3, 3) and model.conv1.stride == (1, 1)  # type: ignore[union-attr]
    assert isinstance(model.maxpool, nn.Identity)
    features = nn.Sequential(model.conv1, model.bn1, model.relu, model.maxpool)  # type: ignore[arg-type]
    assert features(torch.randn(1, 3, 32, 32)).shape[-2:] == (32, 32)  # a 32x32 image keeps its resolution
    assert model.fc.out_features == 10  # type: ignore[union-attr]


def test_tiny_cnn_is_small_enough_for_a_cpu_demo() -> None:
    model = TinyCNN(10)
    assert count_parameters(model) == sum(p.numel() for p in model.parameters())
    assert count_parameters(model) < 200_000
    assert count_parameters(build_model("resnet18", 10, 3)) > 10_000_000


def test_the_same_seed_builds_the_same_weights() -> None:
    torch.manual_seed(3)
    first = build_model("tiny-cnn", 10, 3).state_dict()
    torch.manual_seed(3)
    second = build_model("tiny-cnn", 10, 3).state_dict()
    assert all(torch.equal(first[key], second[key]) for key in first)


def test_torchvision_models_get_three_channels_and_their_minimum_size() -> None:
    assert model_spec("mobilenet_v3_small", 1) == ModelSpec(in_channels=3, input_size=None)
    assert model_spec("squeezenet1_1", 3) == ModelSpec(in_channels=3, input_size=64)
    assert model_spec("inception_v3", 3).input_size == 299
    assert model_spec("vit_b_16", 3).input_size == 224


def test_a_torchvision_model_trains_with_our_class_count_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model build tried to download weights")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(torch.hub, "load_state_dict_from_url", no_network)
    model = build_model("squeezenet1_1", num_classes=7, in_channels=3)
    model.train()
    logits = model(torch.randn(2, 3, 64, 64))
    assert logits.shape == (2, 7)
    logits.sum().backward()
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)


def test_models_with_auxiliary_outputs_return_plain_logits_in_training() -> None:
    model = build_model("googlenet", num_classes=10, in_channels=3)
    model.train()
    logits = model(torch.randn(2, 3, 64, 64))
    assert isinstance(logits, torch.Tensor) and logits.shape == (2, 10)


def test_unknown_name_says_how_to_list_the_models() -> None:
    with pytest.raises(ConfigError) as info:
        build_model("nosuchnet", 10, 3)
    assert info.value.field == "model"
    assert "nosuchnet" in str(info.value) and "gpu-train-monitor models" in str(info.value)


def test_available_models_puts_ours_first_and_lists_each_once() -> None:
    names = available_models()
    assert names[:4] == ["auto", "tiny-cnn", "resnet18", "speedrun-net"]
    assert len(names) == len(set(names))
    assert {"resnet50", "mobilenet_v3_small", "vit_b_16"} <= set(names)
    assert not any(name.startswith(("fasterrcnn", "deeplab", "raft")) for name in names)  # classifiers only


def test_auto_is_resnet18_on_a_gpu_and_the_small_model_on_a_cpu() -> None:
    assert resolve_model("auto", "cpu") == "tiny-cnn"
    assert resolve_model("auto", "cuda") == "resnet18"
    assert resolve_model("auto", "mps") == "resnet18"
    assert resolve_model("speedrun-net", "cpu") == "speedrun-net"


def test_speedrun_net_is_small_and_classifies_cifar_shaped_batches() -> None:
    model = build_model("speedrun-net", 10, 3)
    assert 500_000 < count_parameters(model) < 3_000_000  # far smaller than resnet18's 11M
    assert model(torch.randn(4, 3, 32, 32)).shape == (4, 10)
    assert build_model("speedrun-net", 10, 1)(torch.randn(2, 1, 28, 28)).shape == (2, 10)  # MNIST-shaped


# --- your own model -------------------------------------------------------------------------------------


def test_your_own_factory_gets_the_class_count_and_channels_when_it_takes_them(folder) -> None:
    model = build_model("mymodels:small_net", num_classes=5, in_channels=1)
    assert model(torch.zeros(2, 1, 9, 9)).shape == (2, 5)
    assert model_spec("mymodels:small_net", 1) == ModelSpec(in_channels=1, input_size=None)  # the data as it is
    assert resolve_model("mymodels:small_net", "cuda") == "mymodels:small_net"
    check_output(model, "mymodels:small_net", 1, 9, 9, 5)  # passes: one logit per class


def test_a_factory_without_arguments_is_called_with_none(folder) -> None:
    model = build_model("mymodels:TenWay", num_classes=10, in_channels=3)
    assert type(model).__name__ == "TenWay" and model.training
    before = {name: value.clone() for name, value in model.state_dict().items()}
    check_output(model, "mymodels:TenWay", 3, 32, 32, 10)
    assert model.training  # the check's eval-mode pass leaves the model as it found it
    assert all(torch.equal(before[name], value) for name, value in model.state_dict().items())


@pytest.mark.parametrize(
    "spec, message",
    [
        ("mymodels:not_a_model", "mymodels:not_a_model returned a list, not a torch.nn.Module"),
        (
            "mymodels:no_parameters",
            "mymodels:no_parameters returned a model without trainable parameters: there is nothing to train",
        ),
        ("mymodels:raises", "mymodels:raises raised RuntimeError: the weights file is missing"),
        (
            "mymodels:needs_width",
            "mymodels:needs_width needs the argument width, but a run calls it with num_classes= "
            "and in_channels= (when it takes them); give it a default",
        ),
    ],
)
def test_a_factory_that_gives_no_model_is_named(folder, spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        build_model(spec, 10, 3)
    assert raised.value.field == "model" and str(raised.value) == f"model: {message}"


def test_a_model_that_fails_on_the_run_s_images_names_the_factory_and_the_input(folder) -> None:
    model = build_model("mymodels:for_28px", 10, 1)
    check_output(model, "mymodels:for_28px", 1, 28, 28, 10)  # what it was made for
    with pytest.raises(
        ConfigError,
        match=r"^model: mymodels:for_28px fails on the run's input, a batch shaped "
        r"2x1x32x32 \(batch x channels x height x width, from the dataset\): "
        r"RuntimeError: mat1 and mat2 shapes cannot be multiplied "
        r"\(2x1024 and 784x10\)$",
    ):
        check_output(model, "mymodels:for_28px", 1, 32, 32, 10)


def test_a_model_whose_output_is_not_one_logit_per_class_is_named(folder) -> None:
    ten_way = build_model("mymodels:TenWay", 4, 3)
    with pytest.raises(
        ConfigError,
        match=r"^model: mymodels:TenWay: the model gives 10 outputs per image but the "
        r"dataset has 4 classes; give it 4 outputs \(the factory is called with "
        r"num_classes= when it takes that argument\)$",
    ):
        check_output(ten_way, "mymodels:TenWay", 3, 16, 16, 4)
    with pytest.raises(
        ConfigError,
        match=r"^model: mymodels:returns_a_tuple: the model returned a tuple, expected "
        r"a tensor of logits shaped \(batch, 10\)$",
    ):
        check_output(build_model("mymodels:returns_a_tuple", 10, 3), "mymodels:returns_a_tuple", 3, 8, 8, 10)
    flat = nn.Sequential(nn.Conv2d(3, 10, 1))  # per-pixel logits: 2x10x8x8, not 2x10
    with pytest.raises(
        ConfigError,
        match=r"^model: m:f: the model's output for a batch shaped 2x3x8x8 is "
        r"2x10x8x8, expected 2x10 \(one logit per class for each image\)$",
    ):
        check_output(flat, "m:f", 3, 8, 8, 10)
