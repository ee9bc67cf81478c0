"""Your own model: a `package.module:factory` spec that returns an `nn.Module`, checked before training.

The factory is called with `num_classes=` and `in_channels=` where its signature takes them (a class
works too: its `__init__` is the signature), else with nothing. Before the first step the model gets
one forward pass of two images shaped like the run's batches: a model built for another image size
or channel count, or one whose output is not one logit per class, is reported then, naming the
factory and the shapes, instead of as an error deep inside the loss after the run started.
"""

from __future__ import annotations

import torch
from torch import nn

from ..base.errors import ConfigError
from ..base.text import Message
from ..base.user_code import a_type, call_factory, exit_call, load_callable, one_line
from ..memory import oom

PROBE_BATCH = 2  # images in the checking forward pass (2, not 1: some layers refuse a batch of one)


def build_user_model(spec: str, num_classes: int, in_channels: int) -> nn.Module:
    """The model the spec's factory returns; ConfigError("model", ...) naming the spec when it cannot."""
    factory = load_callable("model", spec)
    model = call_factory("model", spec, factory, num_classes=num_classes, in_channels=in_channels)
    if not isinstance(model, nn.Module):
        raise ConfigError(
            "model", Message("{spec} returned {what}, not a torch.nn.Module", spec=spec, what=a_type(model))
        )
    if not any(p.requires_grad for p in model.parameters()):
        raise ConfigError(
            "model",
            Message("{spec} returned a model without trainable parameters: there is nothing to train", spec=spec),
        )
    return model


def check_output(
    model: nn.Module, spec: str, channels: int, height: int, width: int, num_classes: int, channels_last: bool = False
) -> None:
    """One forward pass of PROBE_BATCH zero images (C, H, W) on the model's device, in eval mode and without
    gradients (no BatchNorm statistics change, no random numbers drawn): ConfigError naming the spec
    when it raises or when its output is not (batch, num_classes). An out-of-memory error stays one."""
    shape = (PROBE_BATCH, channels, height, width)
    device = next(model.parameters()).device
    images = torch.zeros(shape, device=device)
    if channels_last:
        images = images.contiguous(memory_format=torch.channels_last)
    was_training = model.training
    model.eval()
    failure = None
    try:
        with torch.no_grad():
            output = model(images)
    except SystemExit as exc:  # the process is not its to end: said as the mistake it is
        failure = Message("it called {call}", call=exit_call(exc))
    except Exception as exc:
        if oom.is_out_of_memory(exc):
            raise
        failure = one_line(exc)
    finally:
        model.train(was_training)
    shown = "x".join(map(str, shape))
    if failure is not None:  # outside the except block: its traceback would hold the probe's tensors
        raise ConfigError(
            "model",
            Message(
                "{spec} fails on the run's input, a batch shaped {shape} (batch x "
                "channels x height x width, from the dataset): {error}",
                spec=spec,
                shape=shown,
                error=failure,
            ),
        )
    if not isinstance(output, torch.Tensor):
        raise ConfigError(
            "model",
            Message(
                "{spec}: the model returned {what}, expected a tensor of logits shaped (batch, {classes})",
                spec=spec,
                what=a_type(output),
                classes=num_classes,
            ),
        )
    if output.dim() == 2 and output.shape[0] == PROBE_BATCH and output.shape[1] != num_classes:
        raise ConfigError(
            "model",
            Message(
                "{spec}: the model gives {outputs} outputs per image but the dataset has "
                "{classes} classes; give it {wanted} outputs (the factory is called with "
                "num_classes= when it takes that argument)",
                spec=spec,
                outputs=output.shape[1],
                classes=num_classes,
                wanted=num_classes,
            ),
        )
    if tuple(output.shape) != (PROBE_BATCH, num_classes):
        found = "x".join(map(str, output.shape)) or Message("a scalar")
        raise ConfigError(
            "model",
            Message(
                "{spec}: the model's output for a batch shaped {shape} is {found}, "
                "expected {expected} (one logit per class for each image)",
                spec=spec,
                shape=shown,
                found=found,
                expected=f"{PROBE_BATCH}x{num_classes}",
            ),
        )
