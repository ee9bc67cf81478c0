"""Will it fit? The peak memory of one training step, predicted without using memory.

The step (forward, loss, backward, optimizer update) runs on fake tensors: tensors with shapes, dtypes
and devices but no storage (`torch._subclasses.fake_tensor.FakeTensorMode`), so a batch size, an AMP
mode or an optimizer can be tried in a fraction of a second and no memory. `LiveBytes` counts every
storage while it lives; the peak and what held it at the peak (parameters, gradients, optimizer state,
the batch, activations and temporaries) are the prediction. The step traced is the second one: the first
would create the optimizer's state, which a long run holds through every later step (it is made by one
update on zero gradients instead).

`measure_step` runs the same step on real tensors under the same count: what a prediction is checked
against on the CPU, and on a GPU the tensor bytes of a real step.

Not in the trace: the allocator's rounding and cached blocks, cuDNN/cuBLAS workspaces and the CUDA
context (300-600 MB). `Prediction.overhead_bytes` holds them: 0 on the CPU; with a GPU at hand, run one
real step and add `torch.cuda.max_memory_allocated() - measured.peak_bytes` (the allocator's share)
plus, for the whole process, the used device memory before any tensor exists (the context), with
`prediction.with_overhead(bytes)`.

A CUDA step is traced on fake CUDA tensors in a process that has already started CUDA (a run's, a trial's);
elsewhere on fake CPU tensors standing in (`traced_on` says which). Autograd's engine needs a CUDA device to
run a backward pass of CUDA tensors, fake or not, and fake CUDA tensors start CUDA in the process (a context
of several hundred MB): a window asking "will it fit?" must not take that memory itself. The stand-in
allocates the same tensors; what differs is which ops autocast casts on each device and kernels' choices
(cuDNN's batch norm keeps one more small buffer).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from ..base.errors import UserError
from ..base.text import Message
from ..events.module_bytes import ModuleBytes
from ..events.step_timeline import StepTimeline
from .breakdown import SavedTensorCount
from .live_bytes import LiveBytes
from .timeline_trace import TimelineTrace
from .traced_modules import TracedModules
from .tracing import fake_copy, untraceable


class PredictionUnavailable(Exception):
    """The step cannot be traced without memory; `reason` says why, for people (the finder's real trials
    measure it instead)."""

    def __init__(self, reason: Message) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class StepParts:
    """What one training step needs, built on one device: `step(images, labels, marks)` runs forward, loss,
    backward and the optimizer's update, calling `marks.mark(phase)` after each phase when `marks` is given."""

    model: nn.Module
    optimizer: torch.optim.Optimizer
    step: Callable[..., object]  # (images, labels, marks); a watched model's: (*its input tensors, marks)
    more_optimizers: tuple[torch.optim.Optimizer, ...] = ()  # a watched loop's others (a GAN's second one)

    @property
    def optimizers(self) -> tuple[torch.optim.Optimizer, ...]:
        return (self.optimizer, *self.more_optimizers)


@dataclass(frozen=True)
class Prediction:
    """One training step's peak of live tensor bytes and what held it at the peak (the five parts add up to
    `peak_bytes`). Plain values: it crosses threads and processes as it is."""

    peak_bytes: int
    params_bytes: int  # parameters and buffers
    grads_bytes: int
    optimizer_bytes: int  # momentum buffers, Adam moments, step counters
    batch_bytes: int  # the images and labels as the model receives them
    activations_bytes: int  # activations saved for backward and temporaries: the rest
    phase_peaks: tuple[tuple[str, int], ...]  # (phase, highest bytes during it): forward, backward, optimizer
    batch_size: int
    device_kind: str  # the device predicted for: "cpu", "cuda", "mps"
    traced_on: str  # the device kind the step ran on: the same, or "cpu" standing in for one this machine lacks
    method: str  # "fake" (predicted, no memory used) or "measured" (real tensors, same count)
    what: str  # what was traced, for people
    elapsed_s: float
    overhead_bytes: int = 0  # outside the trace (allocator, workspaces, CUDA context): 0 on the CPU; see module doc
    # the step as a real step's breakdown measures it (gpu_train_monitor.memory.like_measured): the gradients when
    # the step is done (at the peak most are not made yet), and what autograd saved for backward, less the weights
    # and the batch (the CPU's measured activations), and the part of that which is the batch
    grads_end_bytes: int = 0
    saved_activations_bytes: int = 0
    saved_inputs_bytes: int = 0
    modules: tuple[ModuleBytes, ...] = ()  # the peak by module (gpu_train_monitor.memory.traced_modules): adds up to it
    timeline: StepTimeline = StepTimeline()  # the step's bytes over time by holder (memory.timeline_trace)

    @property
    def total_bytes(self) -> int:
        """What the device must hold: the traced peak plus the overhead outside it."""
        return self.peak_bytes + self.overhead_bytes

    def with_overhead(self, overhead_bytes: int) -> Prediction:
        return dataclasses.replace(self, overhead_bytes=max(int(overhead_bytes), 0))


def trace_device(device_kind: str) -> torch.device:
    """The device a step predicted for `device_kind` runs on under fake tensors: CUDA where this process has
    started it already, else the CPU standing in (see the module doc)."""
    if device_kind == "cuda" and torch.cuda.is_initialized():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def predict_step(
    build_model: Callable[[], nn.Module],
    build_step: Callable[[nn.Module], StepParts],
    images_shape: tuple[int, ...],
    num_classes: int,
    *,
    device_kind: str = "cpu",
    channels_last: bool = False,
    what: str = "",
) -> Prediction:
    """Trace one step on fake tensors. `build_model()` runs on the meta device (initialisation costs nothing
    and cannot depend on values); its parameters and buffers then become fake tensors on
    `trace_device(device_kind)`, and `build_step(model)` runs under the fake mode with that device as the
    default: the optimizer and the step (it must not move the model with `.to()`, which fake parameters
    refuse). `images_shape`: (batch, channels, height, width), or a language model's (batch, sequence) of token
    ids. PredictionUnavailable when the step cannot be traced (data-dependent shapes, an op without a fake
    implementation, ...), with the reason; a UserError (a bad setting) passes through."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    started = time.perf_counter()
    device = trace_device(device_kind)
    try:
        with torch.device("meta"):
            model = build_model()
        with FakeTensorMode(allow_non_fake_inputs=True), torch.enable_grad():
            with torch.device(device):  # building only: the step makes its tensors where a run's step does
                parts = build_step(fake_copy(model, device))
            with _FusedUpdatesSkipped():
                tracker = _run(parts, step_batch(images_shape, num_classes, device, channels_last))
    except (PredictionUnavailable, UserError):  # a bad setting (an unknown model, ...) is said as such
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of the trace is a prediction that is not there
        raise PredictionUnavailable(untraceable(what, exc)) from None
    return _prediction(tracker, images_shape[0], device_kind, device.type, "fake", what, started)


class _FusedUpdatesSkipped(TorchDispatchMode):
    """Fused optimizer updates (`_fused_sgd_`, `_fused_adam(w)_`, `_fused_adagrad_`: one kernel that changes the
    parameters and the optimizer's state in place and allocates nothing) have no fake-tensor kernel on the CPU, so
    FakeTensorMode would run them for real on zero-filled copies of every tensor they touch: a prediction of a
    1.7 GB model needed 6 GB of memory. On fake tensors their values do not matter and their memory is only the
    tensors they are given, which are counted already: the call is skipped."""

    FUSED = frozenset(
        getattr(torch.ops.aten, name)
        for name in ("_fused_sgd_", "_fused_adam_", "_fused_adamw_", "_fused_adagrad_")
        if hasattr(torch.ops.aten, name)
    )

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if func.overloadpacket in self.FUSED:
            return None  # in place, returns nothing
        return func(*args, **(kwargs or {}))


def measure_step(
    build_model: Callable[[], nn.Module],
    build_step: Callable[[nn.Module], StepParts],
    images_shape: tuple[int, ...],
    num_classes: int,
    *,
    device: torch.device,
    channels_last: bool = False,
    what: str = "",
) -> Prediction:
    """The same step on real tensors on `device` (after one update on zero gradients creates the optimizer's
    state), counted the same way: what a prediction is checked against. Both builders run with `device` as
    the default device."""
    started = time.perf_counter()
    with torch.device(device), torch.enable_grad():
        parts = build_step(build_model())
        batch = step_batch(images_shape, num_classes, device, channels_last)
    with torch.enable_grad():
        tracker = _run(parts, batch)
    return _prediction(tracker, images_shape[0], device.type, device.type, "measured", what, started)


def step_batch(
    shape: tuple[int, ...], num_classes: int, device: torch.device, channels_last: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """Images (batch, channels, height, width) and a label each; or a text batch (batch, sequence): token ids below
    `num_classes` (the vocabulary) and a next token at each position."""
    if len(shape) == 2:
        return (
            torch.randint(0, num_classes, shape, device=device),
            torch.randint(0, num_classes, shape, device=device),
        )
    images = torch.randn(shape, device=device)
    if channels_last and images.dim() == 4:
        images = images.contiguous(memory_format=torch.channels_last)
    return images, torch.randint(0, num_classes, (shape[0],), device=device)


def trace_parts(
    parts: StepParts,
    batch: Sequence[torch.Tensor],
    batch_size: int,
    *,
    device_kind: str,
    traced_on: str,
    what: str,
    started: float,
) -> Prediction:
    """One step of ready-made `parts` on `batch` (fake tensors, under the caller's FakeTensorMode: a watched
    model's copy and its inputs), counted as `predict_step` counts: `parts.step(*batch, marks)`."""
    return _prediction(_run(parts, batch), batch_size, device_kind, traced_on, "fake", what, started)


def _run(parts: StepParts, batch: Sequence[torch.Tensor]) -> _Traced:
    for optimizer in parts.optimizers:
        create_state(optimizer)
    tracker, saved, attribution = LiveBytes(), SavedTensorCount(), TracedModules(parts.model)
    timeline = TimelineTrace(parts.model, attribution.context)
    weights = [*parts.model.parameters(), *parts.model.buffers()]
    with tracker:
        params = tracker.held(weights)
        state = tracker.held(t for optimizer in parts.optimizers for t in _state_tensors(optimizer)) - params
        batch_keys = tracker.held(batch) - params - state
        tracker.restart_peak()
        with saved.counting(), attribution.following(tracker, saved), timeline.following(tracker, saved):
            parts.step(*batch, tracker)
    grads = tracker.keys_of(p.grad for p in parts.model.parameters() if p.grad is not None)
    grads -= params | state | batch_keys
    activations = saved.activations_bytes([*weights, *batch])
    inputs = saved.activations_bytes(weights) - activations
    keys = {"params": params, "state": state, "batch": batch_keys, "grads": grads}
    modules = attribution.rows(tracker.at_peak, keys, parts.optimizers)
    steps = timeline.timeline(
        {"params_bytes": params, "optimizer_bytes": state, "batch_bytes": batch_keys, "grads_bytes": grads}
    )
    return _Traced(
        tracker, params, grads, state, batch_keys, tracker.live_bytes(grads), activations, inputs, modules, steps
    )


@dataclass
class _Traced:
    tracker: LiveBytes
    params: set[int]
    grads: set[int]
    state: set[int]
    batch: set[int]
    grads_end_bytes: int  # the gradients live when the step is done
    saved_activations_bytes: int  # saved for backward, less the weights and the batch
    saved_inputs_bytes: int  # the batch's share of what was saved
    modules: tuple[ModuleBytes, ...]  # the peak by module
    timeline: StepTimeline  # the step's bytes over time


def create_state(optimizer: torch.optim.Optimizer) -> None:
    """The optimizer's state as a first step leaves it (momentum buffers, Adam moments), held through every later
    step: one update on zero gradients, at a fraction of a full step's cost. (A parameter the model leaves
    without a gradient gets state here and none in a run: a small overestimate.)"""
    params = [p for group in optimizer.param_groups for p in group["params"] if p.requires_grad]
    for param in params:
        param.grad = torch.zeros_like(param)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def _state_tensors(optimizer: torch.optim.Optimizer) -> Iterable[torch.Tensor]:
    for state in optimizer.state.values():
        yield from (v for v in state.values() if isinstance(v, torch.Tensor))


def _prediction(
    traced: _Traced, batch_size: int, device_kind: str, traced_on: str, method: str, what: str, started: float
) -> Prediction:
    at_peak = traced.tracker.at_peak

    def held(keys: set[int]) -> int:
        return sum(at_peak.get(key, 0) for key in keys)

    named = held(traced.params) + held(traced.grads) + held(traced.state) + held(traced.batch)
    return Prediction(
        peak_bytes=traced.tracker.peak,
        params_bytes=held(traced.params),
        grads_bytes=held(traced.grads),
        optimizer_bytes=held(traced.state),
        batch_bytes=held(traced.batch),
        activations_bytes=traced.tracker.peak - named,
        phase_peaks=tuple(traced.tracker.phase_peaks),
        batch_size=batch_size,
        device_kind=device_kind,
        traced_on=traced_on,
        method=method,
        what=what,
        elapsed_s=time.perf_counter() - started,
        grads_end_bytes=traced.grads_end_bytes,
        saved_activations_bytes=traced.saved_activations_bytes,
        saved_inputs_bytes=traced.saved_inputs_bytes,
        modules=traced.modules,
        timeline=traced.timeline,
    )
