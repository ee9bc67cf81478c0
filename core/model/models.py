"""Model construction: tiny-cnn, resnet18 with a CIFAR stem, speedrun-net, any torchvision classifier, the GPT models
for text (`gpu_train_monitor.model.gpt`), or your own (`package.module:factory`, built by
`gpu_train_monitor.model.user_models`).

All models are built with `weights=None`: no download ever happens. Pretrained weights are not offered
here because the app's job is to watch training from scratch; a name torchvision does not know is a
ConfigError that says how to list the known ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from ..base.errors import ConfigError
from ..base.text import Message
from ..base.user_code import is_spec
from ..config.sequences import GPT_MODELS, GPT_SIZES, VOCAB, gpt_size, is_gpt, is_text_dataset
from .gpt import GPT, GPTShape

# torchvision models with a fixed minimum input: batches are resized on the device to this size.
_MIN_INPUT = {
    "inception_v3": 299,
    "googlenet": 64,
    "vit_": 224,
    "maxvit_": 224,
    "swin_": 224,
    "alexnet": 64,
    "squeezenet": 64,
}


@dataclass(frozen=True)
class ModelSpec:
    """What the batch pipeline must give the model: channel count and input side length (None: any)."""

    in_channels: int
    input_size: int | None


class TinyCNN(nn.Module):
    """A small conv net that trains at thousands of images/s on a laptop CPU: the demo model."""

    def __init__(self, num_classes: int, in_channels: int = 3, width: int = 32) -> None:
        super().__init__()

        def block(cin: int, cout: int) -> nn.Sequential:
            return nn.Sequential(
                nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                nn.BatchNorm2d(cout),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(2),
            )

        self.features = nn.Sequential(block(in_channels, width), block(width, 2 * width), block(2 * width, 4 * width))
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4 * width, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


class SpeedrunNet(nn.Module):
    """A small, fast CIFAR net for the speed-run preset, in the style of airbench and hlb-CIFAR10: a 3x3
    stem, three conv-pool-BN-GELU-conv-BN-GELU groups (64, 128, 256 channels; every pool halves the side
    early, so most convolutions run on small maps), a global max-pool and a bias-free linear head whose
    logits are scaled down (a fixed temperature that lets a high learning rate train stably). About 1.2M
    parameters and ~85M multiply-adds per 32x32 image, a sixth of resnet18's CIFAR variant."""

    LOGIT_SCALE = 0.125

    def __init__(self, num_classes: int, in_channels: int = 3, widths: tuple[int, int, int] = (64, 128, 256)) -> None:
        super().__init__()

        def conv_bn(cin: int, cout: int) -> list[nn.Module]:
            return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.GELU()]

        layers: list[nn.Module] = conv_bn(in_channels, 32)
        cin = 32
        for width in widths:
            layers += [
                nn.Conv2d(cin, width, 3, padding=1, bias=False),
                nn.MaxPool2d(2),
                nn.BatchNorm2d(width),
                nn.GELU(),
                *conv_bn(width, width),
            ]
            cin = width
        self.features = nn.Sequential(*layers)
        # the stem and each group, as runs of `features`: the blocks activation checkpointing recomputes
        self.checkpoint_groups = ((0, 3), *((3 + 6 * i, 9 + 6 * i) for i in range(len(widths))))
        self.pool = nn.AdaptiveMaxPool2d(1)
        self.head = nn.Linear(cin, num_classes, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.pool(self.features(x)).flatten(1)) * self.LOGIT_SCALE


class _LogitsOnly(nn.Module):
    """Unwraps torchvision's training-mode tuples (InceptionOutputs, GoogLeNetOutputs) to plain logits."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.inner(x)
        return out.logits if hasattr(out, "logits") else out


def available_models() -> list[str]:
    """Every name `build_model` accepts: ours first, then torchvision's classification models."""
    import torchvision.models as tvm

    ours = ["auto", "tiny-cnn", "resnet18", "speedrun-net", *GPT_MODELS]
    return ours + sorted(set(tvm.list_models(module=tvm)) - {"resnet18"})


def resolve_model(name: str, device_kind: str, dataset: str = "") -> str:
    """The model `auto` stands for on a device of `device_kind` ('cpu', 'cuda', 'mps': `torch.device.type`) for
    `dataset`: resnet18 on a GPU, tiny-cnn on a CPU (where resnet18 trains at ~16 images/s on 2 cores, so a first
    run would take minutes); for text, gpt-small on a GPU and gpt-tiny on a CPU. Other names are returned as
    they are."""
    if name != "auto":
        return name  # a spec too: it is the user's choice on every device
    gpu = device_kind in ("cuda", "mps")
    if is_text_dataset(dataset):
        return "gpt-small" if gpu else "gpt-tiny"
    return "resnet18" if gpu else "tiny-cnn"


def model_options(config: Any, vocab: int = VOCAB) -> dict[str, Any]:
    """What `build_model` needs of `config` beyond the model's name: a GPT's shape (its sequence length is the
    position table's); nothing for another model."""
    if not is_gpt(config.model):
        return {}
    layers, width, heads = gpt_size(config)
    return {"gpt": GPTShape(vocab, config.seq_len, layers, width, heads, config.attention)}


def model_spec(name: str, data_channels: int) -> ModelSpec:
    """Channels and input size the named model expects for data with `data_channels` channels (your own
    model is given the data as it is)."""
    if name in ("tiny-cnn", "resnet18", "speedrun-net") or is_spec(name) or is_gpt(name):
        return ModelSpec(in_channels=data_channels, input_size=None)
    size = next((s for prefix, s in _MIN_INPUT.items() if name.startswith(prefix)), None)
    return ModelSpec(in_channels=3, input_size=size)


def build_model(name: str, num_classes: int, in_channels: int, gpt: GPTShape | None = None) -> nn.Module:
    """Build the named model with freshly initialised weights (seed torch first for reproducibility). A GPT is
    built as `gpt` says (`model_options(config)`), else at its preset's size for sequences of up to 1024 tokens."""
    if is_spec(name):
        from .user_models import build_user_model

        return build_user_model(name, num_classes, in_channels)
    if is_gpt(name):
        if gpt is None:
            gpt = GPTShape(num_classes, 1024, *GPT_SIZES[name])
        return GPT(gpt)
    if name == "tiny-cnn":
        return TinyCNN(num_classes, in_channels)
    if name == "speedrun-net":
        return SpeedrunNet(num_classes, in_channels)
    if name == "auto":
        raise ValueError("resolve 'auto' with resolve_model(name, device_kind) first")
    import torchvision.models as tvm

    if name == "resnet18":
        model = tvm.resnet18(weights=None, num_classes=num_classes)
        # CIFAR stem: a 3x3 stride-1 first conv and no max-pool keep 32x32 inputs from vanishing.
        model.conv1 = nn.Conv2d(in_channels, 64, kernel_size=3, stride=1, padding=1, bias=False)
        model.maxpool = nn.Identity()
        return model
    if name not in tvm.list_models(module=tvm):
        raise ConfigError(
            "model",
            Message("unknown model {name}; `gpu-train-monitor models` lists the available ones", name=repr(name)),
        )
    kwargs: dict[str, object] = {"weights": None, "num_classes": num_classes}
    if name in ("googlenet", "inception_v3"):
        kwargs.update(aux_logits=False, init_weights=True)
    try:
        return _LogitsOnly(tvm.get_model(name, **kwargs))
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            "model",
            Message(
                "{name} cannot be built as a {classes}-class classifier: {error}",
                name=name,
                classes=num_classes,
                error=str(exc),
            ),
        ) from None


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
