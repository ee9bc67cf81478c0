"""One step of a watched model traced on tensors without memory (gpu_train_monitor.watch.step_prediction runs it,
on a thread beside the training or, for a script with global hooks of its own, in line with them set aside).

What is traced: a copy of the live model whose parameters and buffers are fake tensors of the same shapes, dtypes
and devices (the weights are not copied, the live model is not touched), called on fake inputs shaped as its first
forward's (gpu_train_monitor.watch.step_inputs), under autocast when that forward was; then backward from a stand-in
loss (the loss the forward returned, else the sum of its floating outputs) and one update of a new optimizer of each
watched optimizer's class with the same param-group hyper-parameters (its state made first, as
gpu_train_monitor.memory.predict does).

What is not: the script's own loss function (cross-entropy keeps one more copy of the logits), a GradScaler,
anything the loop does between forward and step (gradient accumulation, clipping), allocator overhead and the CUDA
context.
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import torch
from torch import nn
from torch.utils._pytree import tree_flatten

from ..base.text import Message
from ..memory.predict import Prediction, PredictionUnavailable, StepParts, trace_parts
from ..memory.tracing import untraceable
from .optimizer_capture import unwrapped_optimizer
from .placement import unwrapped_model
from .step_inputs import StepInputs
from .trace_thread import traced_objects

TRACED_DEVICES = ("cpu", "cuda")  # others (mps) are traced on the CPU standing in
MODULE_HOOKS = tuple(
    f"_global_{name}"
    for name in (
        "backward_pre_hooks",
        "backward_hooks",
        "forward_pre_hooks",
        "forward_hooks",
        "forward_hooks_with_kwargs",
        "forward_hooks_always_called",
        "module_registration_hooks",
        "parameter_registration_hooks",
        "buffer_registration_hooks",
    )
)


def predict_watched(
    model: nn.Module | None,
    optimizers: Sequence[torch.optim.Optimizer],
    inputs: StepInputs | None,
    *,
    beside: bool = False,
) -> Prediction:
    """One step of `model` traced on fake tensors (see the module doc); PredictionUnavailable with the reason.
    `beside`: on a thread marked `tracing()`, where the global hooks stay (ours let it pass); else they are set
    aside while it runs."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    started = time.perf_counter()
    model = unwrapped_model(model)
    optimizers = [unwrapped_optimizer(optimizer) for optimizer in optimizers]
    if model is None or not optimizers:
        raise PredictionUnavailable(Message("the model or its optimizer was not given to the watch"))
    if inputs is None:
        raise PredictionUnavailable(Message("the model's forward was not seen before its first optimizer step"))
    kind = _device_kind(model)
    what = describe(model, optimizers, inputs, kind)
    try:
        aside = contextlib.nullcontext() if beside else unseen()
        with aside, FakeTensorMode(allow_non_fake_inputs=True), _no_autocast(), torch.enable_grad():
            fakes: dict[int, torch.Tensor] = {}
            copied = fake_model(model, fakes)
            fake_optimizers = [optimizer_copy(optimizer, fakes) for optimizer in optimizers]
            args, kwargs, tensors = inputs.build(traced_device)
            step = _step(copied, fake_optimizers, args, kwargs, inputs)
            parts = StepParts(copied, fake_optimizers[0], step, tuple(fake_optimizers[1:]))
            traced_on = traced_device(next(iter(fakes.values())).device).type if fakes else "cpu"
            return trace_parts(
                parts, tensors, inputs.samples, device_kind=kind, traced_on=traced_on, what=what, started=started
            )
    except PredictionUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of the trace is a prediction that is not there
        raise PredictionUnavailable(untraceable(what, exc)) from None


def _step(
    model: nn.Module,
    optimizers: Sequence[torch.optim.Optimizer],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    inputs: StepInputs,
) -> Callable[..., object]:
    def step(*batch_and_marks: Any) -> object:
        marks = batch_and_marks[-1]
        cast = torch.autocast(*inputs.autocast) if inputs.autocast else contextlib.nullcontext()
        with cast:
            loss = stand_in_loss(model(*args, **kwargs))
        marks.mark("forward")
        loss.backward()
        marks.mark("backward")
        for optimizer in optimizers:
            optimizer.step()
        marks.mark("optimizer")
        return loss

    return step


def stand_in_loss(output: Any) -> torch.Tensor:
    """The loss a forward returned (a scalar, or a `loss` field), else the sum of its floating outputs."""
    loss = output.get("loss") if isinstance(output, Mapping) else getattr(output, "loss", None)
    if isinstance(output, torch.Tensor) and output.numel() == 1:
        loss = output
    if isinstance(loss, torch.Tensor) and loss.numel() == 1 and loss.requires_grad:
        return loss.reshape(())
    values = output.values() if isinstance(output, Mapping) else output
    leaves = [t for t in tree_flatten(values)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
    leaves = [t for t in leaves if t.is_floating_point() or t.is_complex()]
    if not leaves:
        raise PredictionUnavailable(Message("its forward returned no tensor that a gradient flows to"))
    total = leaves[0].sum()
    for tensor in leaves[1:]:
        total = total + tensor.sum()
    return total


def traced_device(device: torch.device) -> torch.device:
    """Where a tensor on `device` is traced: the same device, or the CPU standing in (MPS, ...)."""
    return device if device.type in TRACED_DEVICES else torch.device("cpu")


def fake_model(model: nn.Module, fakes: dict[int, torch.Tensor]) -> nn.Module:
    """A copy of `model`, module by module, whose parameters and buffers are new tensors of the same layouts (fake
    under a FakeTensorMode; `fakes`: id(original) -> copy, tied ones stay tied) and which has no hooks. Other
    attributes are shared with the live modules: only the copy's parameters, buffers and submodules are its own."""
    copies: dict[int, nn.Module] = {}

    def copy_module(module: nn.Module) -> nn.Module:
        if id(module) in copies:
            return copies[id(module)]
        clone = copy.copy(module)
        copies[id(module)] = clone
        traced_objects.add(clone)
        state = clone.__dict__
        for name, value in list(state.items()):
            if "hooks" in name and isinstance(value, dict):
                state[name] = type(value)()
        state["_parameters"] = {name: fake_of(p, fakes) for name, p in module._parameters.items()}
        state["_buffers"] = {name: fake_of(b, fakes) for name, b in module._buffers.items()}
        state["_modules"] = {name: m if m is None else copy_module(m) for name, m in module._modules.items()}
        if hasattr(clone, "_init_flat_weights"):  # an RNN's list of its weights: the copy's own
            clone._init_flat_weights()
        return clone

    return copy_module(model)


def fake_of(tensor: torch.Tensor | None, fakes: dict[int, torch.Tensor]) -> Any:
    if tensor is None or isinstance(tensor, nn.parameter.UninitializedTensorMixin):
        return tensor
    if id(tensor) not in fakes:
        device = traced_device(tensor.device)
        made = torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype, device=device)
        fakes[id(tensor)] = nn.Parameter(made, tensor.requires_grad) if isinstance(tensor, nn.Parameter) else made
    return fakes[id(tensor)]


def optimizer_copy(optimizer: torch.optim.Optimizer, fakes: dict[int, torch.Tensor]) -> torch.optim.Optimizer:
    """A new optimizer of `optimizer`'s class over the fake parameters, each group with its hyper-parameters. A CUDA
    group left to torch's choice is multi-tensor (foreach), as torch picks for real CUDA tensors and not for fake
    ones (gpu_train_monitor.engine.prediction does the same)."""
    groups = []
    for group in optimizer.param_groups:
        copied = {key: value for key, value in group.items() if key != "params"}
        copied["params"] = [fake_of(p, fakes) for p in group["params"]]
        on_cuda = any(p.device.type == "cuda" for p in group["params"])
        if on_cuda and "foreach" in copied and copied["foreach"] is None and not copied.get("fused"):
            copied["foreach"] = True
        groups.append(copied)
    try:
        made = type(optimizer)(groups)
    except TypeError:  # a class whose constructor requires its defaults (lr) besides the groups
        made = type(optimizer)(groups, **optimizer.defaults)
    traced_objects.add(made)
    return made


def describe(model: nn.Module, optimizers: Sequence[torch.optim.Optimizer], inputs: StepInputs, kind: str) -> Message:
    """What was traced, for people: "Sequential at batch 16 (no autocast, AdamW) on cpu, with the loss ..."."""
    precision = f"{str(inputs.autocast[1]).removeprefix('torch.')} autocast" if inputs.autocast else "no autocast"
    return Message(
        "{model} at batch {batch} ({precision}, {optimizer}) on {device}, with the loss the model returns, or else "
        "the sum of its outputs, in place of the training's own loss",
        model=type(model).__name__,
        batch=inputs.samples,
        precision=precision,
        optimizer="+".join(type(optimizer).__name__ for optimizer in optimizers),
        device=kind,
    )


def _device_kind(model: nn.Module) -> str:
    first = next(iter(model.parameters()), None)
    return first.device.type if first is not None else "cpu"


@contextlib.contextmanager
def _no_autocast() -> Iterator[None]:
    """The step's own autocast only (a step() called inside the loop's autocast block does not cast the update)."""
    with torch.autocast("cpu", enabled=False):
        if torch.cuda.is_initialized():
            with torch.autocast("cuda", enabled=False):
                yield
        else:
            yield


@contextlib.contextmanager
def unseen() -> Iterator[None]:
    """Nothing run inside is seen by the step capture's patches (its backward, a GradScaler's step) nor by any
    global module or optimizer hook (the capture's, the script's own): each is set aside and put back."""
    from torch.nn.modules import module as modules
    from torch.optim import optimizer as optimizers

    from . import step_capture

    aside = [(modules, name, getattr(modules, name)) for name in MODULE_HOOKS if hasattr(modules, name)]
    aside += [
        (optimizers, name, getattr(optimizers, name))
        for name in ("_global_optimizer_pre_hooks", "_global_optimizer_post_hooks")
    ]
    active = list(step_capture._active)
    for owner, name, hooks in aside:
        setattr(owner, name, type(hooks)())
    step_capture._active.clear()
    try:
        yield
    finally:
        for owner, name, hooks in aside:
            setattr(owner, name, hooks)
        step_capture._active[:] = active
