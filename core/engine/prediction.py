"""A run's memory predicted from its RunConfig: the model, optimizer and step a run builds
(gpu_train_monitor.engine.recipe's choices, gpu_train_monitor.model.step's `TrainingStep.step` itself), traced on fake
tensors by `gpu_train_monitor.memory.predict`.

What differs from a run, on purpose: the model is traced eagerly (torch.compile's fused kernels usually
hold less); fp16's gradient scaler is left out (it unscales the gradients in place: a few scalars); a
data-parallel run is predicted per process at its share of the batch, without DistributedDataParallel's
gradient buckets (about one more copy of the gradients). The optimizer is fused where the config asks (its
default), as in a run; otherwise a CUDA run's update is multi-tensor (foreach), as torch picks for real CUDA
tensors and not for fake ones, so it is asked for.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, cast

import torch
from torch import nn

from ..base.errors import ConfigError
from ..base.text import Message
from ..base.user_code import is_spec
from ..config.run_config import RunConfig
from ..config.sequences import VOCAB, is_text_dataset
from ..data.datasets import dataset_shape
from ..device.devices import device_kind
from ..memory.breakdown import StepMemoryRecorder
from ..memory.live_bytes import LiveBytes
from ..memory.predict import Prediction, PredictionUnavailable, StepParts, measure_step, predict_step, trace_device
from ..memory.tracing import untraceable
from ..model.models import build_model, model_options, model_spec, resolve_model
from .recipe import assemble_trainer

_PRECISION = {"off": "fp32", "bf16": "bf16 autocast", "fp16": "fp16 autocast"}


def predict(
    config: RunConfig, batch_size: int | None = None, *, device: str | None = None, **overrides: Any
) -> Prediction:
    """The peak memory of one training step of `config` at `batch_size` (default: the config's) on a device
    of kind `device` ("cpu", "cuda", "mps"; default: the config's device, `auto` the best one here), with
    `overrides` applied to the config first (amp="bf16", optimizer="adamw", ...). No memory is used and no
    GPU is needed. ConfigError/DatasetError for a bad setting; PredictionUnavailable, with the reason, for
    a step that cannot be traced. Takes about 0.1-0.5 s for the built-in models at a few hundred images."""
    config = config.replace(**overrides) if overrides else config
    kind = device or device_kind(config.device)
    config = config.replace(model=resolve_model(config.model, kind, config.dataset))
    shape, classes = step_input(config, batch_size or config.batch_size)
    return predict_step(
        lambda: _own_model(config, shape, classes, kind),
        lambda model: _own_model_step(config, model, kind, shape, classes),
        shape,
        classes,
        device_kind=kind,
        channels_last=config.channels_last,
        what=describe(config, shape[0], kind),
    )


def measure(
    config: RunConfig, batch_size: int | None = None, *, device: torch.device | None = None, **overrides: Any
) -> Prediction:
    """The same step run for real on `device` (default: the CPU) and counted the same way: two real steps
    (the first creates the optimizer's state). What a prediction is checked against."""
    config = config.replace(**overrides) if overrides else config
    device = device or torch.device("cpu")
    config = config.replace(model=resolve_model(config.model, device.type, config.dataset))
    shape, classes = step_input(config, batch_size or config.batch_size)
    return measure_step(
        lambda: build_model(config.model, classes, shape[1], **model_options(config, classes)),
        lambda model: build_step(config, model, device.type, shape, classes, device),
        shape,
        classes,
        device=device,
        channels_last=config.channels_last,
        what=describe(config, shape[0], device.type),
    )


def step_input(config: RunConfig, batch_size: int) -> tuple[tuple[int, ...], int]:
    """((batch, channels, height, width) of the images the model receives, classes), without loading the
    data (your own dataset is loaded: its factory says its shape only by returning it); for a text,
    ((batch, seq_len) token ids, the vocabulary). A data-parallel run's process receives its share of the batch."""
    if is_text_dataset(config.dataset):
        return (max(batch_size // config.nproc, 1), config.seq_len), VOCAB
    channels, height, width, classes, _ = dataset_shape(config)
    spec = model_spec(config.model, channels)
    if spec.input_size is not None:  # batches are resized on the device for models with a fixed minimum input
        height = width = spec.input_size
    return (max(batch_size // config.nproc, 1), spec.in_channels, height, width), classes


@contextlib.contextmanager
def _own_model_untraceable(config: RunConfig, batch_size: int, kind: str) -> Iterator[None]:
    """Your own model may do without values (on the meta device, on fake tensors) what it cannot: its error
    is a prediction that is not there, not a bad setting (a run builds and checks it with values)."""
    try:
        yield
    except ConfigError as exc:
        if not is_spec(config.model):
            raise
        raise PredictionUnavailable(untraceable(describe(config, batch_size, kind), exc)) from None


# What PyTorch says when code needs values that tensors on the meta device or fake tensors do not have.
_NEEDS_VALUES = ("meta", "fake", "data-dependent", "NotImplementedError", "Cannot copy out")


def _own_model(config: RunConfig, shape: tuple[int, ...], classes: int, kind: str) -> nn.Module:
    """Your own model built on the meta device (no memory). A module that does not import, or a factory that fails
    as it would in a run (a TypeError, a NameError, its own ValueError), is a ConfigError naming it (exit 2: the
    finder would fail the same way); a factory that needs values the meta device lacks is a prediction that is not
    there (the finder measures it with real steps)."""
    if is_spec(config.model):
        from ..base.user_code import load_callable

        load_callable("model", config.model)  # an import error or a missing name: the user's to fix, said as such
    try:
        return build_model(config.model, classes, shape[1], **model_options(config, classes))
    except ConfigError as exc:
        if not is_spec(config.model) or not any(word in str(exc) for word in _NEEDS_VALUES):
            raise
        raise PredictionUnavailable(untraceable(describe(config, shape[0], kind), exc)) from None


def _own_model_step(config: RunConfig, model: nn.Module, kind: str, shape: tuple[int, ...], classes: int) -> StepParts:
    with _own_model_untraceable(config, shape[0], kind):
        return build_step(config, model, kind, shape, classes)


def build_step(
    config: RunConfig,
    model: nn.Module,
    kind: str,
    shape: tuple[int, ...],
    classes: int,
    device: torch.device | None = None,
) -> StepParts:
    """Optimizer and training step for `model` as `gpu_train_monitor.engine.recipe.build_trainer` builds them, on the
    default device (fake tensors when predicting: the model is never moved with `.to()`). `kind`: the device kind the
    run trains on; `device`: where the step runs (default: where a prediction for `kind` is traced)."""
    device = device or trace_device(kind)
    image_size = None if len(shape) == 2 else (shape[2], shape[3])  # a text's token ids have none
    # your own model's lazy modules are built by its check; the rest as a run builds it (one recipe)
    trainer = assemble_trainer(config, model, device.type, shape[1], classes, image_size, traced_for=kind)

    def step(images: torch.Tensor, labels: torch.Tensor, marks: LiveBytes | None) -> object:
        return trainer.step(images, labels, cast(StepMemoryRecorder | None, marks))  # it only calls mark(phase)

    return StepParts(trainer.model, trainer.optimizer, step)


def describe(config: RunConfig, batch_size: int, kind: str) -> Message:
    """What a prediction traced, for people: "resnet18 at batch 256 (bf16 autocast, sgd) on cuda", "gpt-small at
    batch 8 x 1,024 tokens (fp32, adamw) on cuda"."""
    if is_text_dataset(config.dataset):
        return Message(
            "{model} at batch {batch} x {seq_len:,} tokens ({precision}, {optimizer}) on {device}",
            model=config.model,
            batch=batch_size,
            seq_len=config.seq_len,
            precision=_PRECISION.get(config.amp, config.amp),
            optimizer=config.optimizer,
            device=kind,
        )
    return Message(
        "{model} at batch {batch} ({precision}, {optimizer}) on {device}",
        model=config.model,
        batch=batch_size,
        precision=_PRECISION.get(config.amp, config.amp),
        optimizer=config.optimizer,
        device=kind,
    )
