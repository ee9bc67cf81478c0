"""The one bounds table of a run's settings: every knob's type, default, range, choices and help.

`BOUNDS` is the single source of truth: `RunConfig` validation (gpu_train_monitor.config.field_checks), the CLI's
argparse options and the GUI's form widgets all read it, so they cannot disagree. This module imports no torch, so
the window can build its form before torch has loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base.text import Message
from ..base.user_code import SPEC_FORM
from .sequences import ATTENTIONS, GPT_MODELS, SYNTHETIC_TEXT

DATASETS = ("synthetic", "cifar10", "mnist", "fashion-mnist", "imagefolder", SYNTHETIC_TEXT)
BUILTIN_MODELS = ("auto", "tiny-cnn", "resnet18", "speedrun-net", *GPT_MODELS)
OPTIMIZERS = ("sgd", "adamw")
AMP_MODES = ("off", "fp16", "bf16")
PLACEMENTS = ("auto", "stream", "resident")
EXPANDABLE_SEGMENTS = ("auto", "off", "on")  # auto: as PYTORCH_CUDA_ALLOC_CONF says (off when it says nothing)
ON_OOM = ("stop", "shrink")


@dataclass(frozen=True)
class Bound:
    """How one config field may be set: its type, default, range or choices, and a one-line help."""

    kind: type  # int, float, bool, str
    default: Any
    help: str  # a `Message`: the window shows it (translated) as the field's tooltip
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None
    optional: bool = False  # None is allowed (and means "no limit" / "not set")
    log_scale: bool = False  # floats spanning decades (learning rate): widgets step by factors


BOUNDS: dict[str, Bound] = {
    "device": Bound(str, "auto", Message("device to train on: auto, cpu, cuda, cuda:N or mps")),
    "model": Bound(
        str,
        "auto",
        Message(
            "auto (resnet18 on a GPU, tiny-cnn on a CPU; for text gpt-small on a GPU, gpt-tiny on a CPU), "
            "tiny-cnn, resnet18 (CIFAR stem), speedrun-net (a small fast CIFAR net), gpt-tiny or gpt-small "
            "(a GPT for text), any torchvision classifier name, or your own: {spec_form} (or "
            "path/to/file.py:factory), a callable returning an nn.Module (given num_classes= and "
            "in_channels= when it takes them)",
            spec_form=SPEC_FORM,
        ),
    ),
    "layers": Bound(
        int, None, Message("transformer blocks of a GPT model (default: its preset's)"), 1, 256, optional=True
    ),
    "width": Bound(
        int, None, Message("a GPT model's embedding width (default: its preset's)"), 8, 16384, optional=True
    ),
    "heads": Bound(int, None, Message("a GPT model's attention heads (default: its preset's)"), 1, 256, optional=True),
    "attention": Bound(
        str,
        "fused",
        Message(
            "a GPT model's attention: fused (scaled_dot_product_attention) or plain (the softmax of QK^T, "
            "masked: it holds each head's T x T scores)"
        ),
        choices=ATTENTIONS,
    ),
    # no values to fill in: the braces below are literal (a Message formats only when given values)
    "dataset": Bound(
        str,
        "synthetic",
        Message(
            "dataset to train on: synthetic-text and text:PATH (a text file, read as "
            "bytes) are text; or your own: a callable (path/to/file.py:factory "
            "works too) returning a map-style Dataset of (image tensor CxHxW, int "
            "label), or a (train, val) tuple or a {'train', 'val'} dict of them"
        ),
        choices=DATASETS,
    ),
    "data_dir": Bound(
        str, None, Message("folder holding the dataset files (default: the user data folder)"), optional=True
    ),
    "download": Bound(bool, False, Message("download the dataset into the data folder when it is missing")),
    "synthetic_samples": Bound(
        int,
        2560,
        Message("training samples generated for a synthetic dataset: images, or sequences for synthetic-text"),
        256,
        2_000_000,
    ),
    "batch_size": Bound(int, 128, Message("samples per training step: images, or sequences of text"), 1, 65536),
    "seq_len": Bound(
        int, 128, Message("tokens in each sequence of a text dataset (a sample is one sequence)"), 1, 65536
    ),
    "epochs": Bound(
        int,
        None,
        Message(
            "passes over the training set (default: 1, or as many as --max-steps needs "
            "when that is given; with both, the run stops at whichever comes first)"
        ),
        1,
        10_000,
        optional=True,
    ),
    "max_steps": Bound(
        int,
        None,
        Message(
            "train for this many steps, over as many epochs as that takes (default: "
            "one epoch; with --epochs too, the run stops at whichever comes first)"
        ),
        1,
        100_000_000,
        optional=True,
    ),
    "lr": Bound(float, 0.03, Message("learning rate"), 1e-8, 10.0, log_scale=True),
    "optimizer": Bound(str, "sgd", Message("optimizer"), choices=OPTIMIZERS),
    "momentum": Bound(float, 0.9, Message("SGD momentum"), 0.0, 0.999),
    "weight_decay": Bound(float, 5e-4, Message("weight decay"), 0.0, 1.0, log_scale=True),  # 1e-5..1e-1: decades too
    "amp": Bound(str, "off", Message("automatic mixed precision"), choices=AMP_MODES),
    "channels_last": Bound(bool, False, Message("use the channels_last memory format for the model and batches")),
    "activation_checkpointing": Bound(
        bool,
        False,
        Message(
            "keep only each block's input for backward and run its forward again there: less "
            "activation memory for more compute (torch.utils.checkpoint over the model's blocks)"
        ),
    ),
    "expandable_segments": Bound(
        str,
        "auto",
        Message(
            "CUDA's caching allocator: on grows its segments in place instead of caching fixed blocks (less memory "
            "reserved but unused); auto keeps what PYTORCH_CUDA_ALLOC_CONF says (off when it says nothing); "
            "CUDA only"
        ),
        choices=EXPANDABLE_SEGMENTS,
    ),
    "compile": Bound(
        bool,
        False,
        Message(
            "compile the model with torch.compile (its compile time is reported apart "
            "and left out of images/s; needs a C++ compiler on the CPU, Triton on "
            "CUDA)"
        ),
    ),
    "cudnn_benchmark": Bound(
        bool,
        False,
        Message(
            "let cuDNN time its convolution algorithms and keep the fastest "
            "(CUDA only; pays off when batch shapes do not change)"
        ),
    ),
    "fused_optimizer": Bound(
        bool,
        True,
        Message(
            "update all parameters in one fused kernel (on CUDA it also keeps "
            "fp16's gradient-scaler check on the device: no host sync per step)"
        ),
    ),
    "placement": Bound(
        str,
        "auto",
        Message(
            "where the data lives: stream (DataLoader) or resident (on the device); auto picks resident when it fits"
        ),
        choices=PLACEMENTS,
    ),
    "workers": Bound(int, 0, Message("DataLoader worker processes (stream placement)"), 0, 64),
    "pin_memory": Bound(bool, True, Message("pin host batches for faster copies to a GPU (stream placement)")),
    "non_blocking": Bound(bool, True, Message("copy batches to the GPU asynchronously (stream placement)")),
    "seed": Bound(int, 0, Message("random seed for data, model and shuffling"), 0, 2**31 - 1),
    "report_interval": Bound(
        float,
        0.1,
        Message("seconds between progress reports (no host sync: the losses arrive a report later on a GPU)"),
        0.01,
        10.0,
    ),
    "on_oom": Bound(
        str, "stop", Message("on out of memory: stop the run, or halve the batch and continue"), choices=ON_OOM
    ),
    "nproc": Bound(
        int,
        1,
        Message(
            "processes training together, data-parallel (torch.distributed): one per GPU, or "
            "CPU processes where there is no GPU; batch_size is split evenly over them"
        ),
        1,
        1024,
    ),
    "sync_bn": Bound(
        bool,
        False,
        Message(
            "synchronise BatchNorm statistics across processes (nproc > 1): each step "
            "then normalises over the whole batch, as one process would"
        ),
    ),
}


# The batch-size finder's own options (not RunConfig fields): the CLI's find-batch-size options, their
# help, and the finder's checks read them here, like BOUNDS. Its batches are batch sizes a run accepts.
FINDER_BOUNDS: dict[str, Bound] = {
    "margin": Bound(float, 0.1, Message("fraction of the capacity kept free"), 0.0, 0.99),
    "start": Bound(int, 1, Message("first batch size tried"), 1, BOUNDS["batch_size"].maximum),
    "max_batch": Bound(
        int, int(BOUNDS["batch_size"].maximum), Message("largest batch size tried"), 1, BOUNDS["batch_size"].maximum
    ),
}


def bound_of(name: str) -> Bound:
    """The bound of a RunConfig field or of a finder option (their names never collide)."""
    return BOUNDS[name] if name in BOUNDS else FINDER_BOUNDS[name]
