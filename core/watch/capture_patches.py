"""The patches the step capture (gpu_train_monitor.watch.step_capture) needs in torch, shared by every capture
installed and taken out with the last one: `torch.autograd.backward` (which `Tensor.backward` calls) reports the
losses a backward starts from, `GradScaler.scale` keeps a scaled loss's unscaled value on it, and `GradScaler.step`
says when the scaler skipped an optimizer's step (inf gradients: that iteration trained nothing), and
`Optimizer.__init__` counts the optimizers made (a script that updated its weights by hand and now makes one: its
backward()s are no longer steps). And an optimizer step's closure is handed on wrapped, so that only its first
evaluation counts (LBFGS evaluates it up to 20 times a step).

Only the outermost backward with an implicit gradient reports (a checkpointed segment's inner backward passes its
gradients, it starts from no loss). Nothing here reads a tensor's value, and a failure of a capture's is that
capture's (`give_up`), never the script's backward.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from torch.optim import Optimizer

from .trace_thread import tracing_here

if TYPE_CHECKING:
    from .step_capture import StepCapture

UNSCALED = "_gpu_train_monitor_unscaled"  # the attribute a scaled loss keeps its unscaled value in

_active: list[StepCapture] = []  # the captures installed (step_prediction sets them aside while it traces)
_originals: list[tuple[Any, str, Any]] = []  # (owner, attribute, original) of every patch in place
_backward_depth = 0  # nested backward calls (a checkpointed segment's) are not losses
optimizers_made = [0]  # optimizers constructed while the patches were in place


def losses_of(tensors: Any) -> list[torch.Tensor]:
    """The scalars a backward with an implicit gradient starts from (their unscaled values)."""
    if isinstance(tensors, torch.Tensor):
        tensors = [tensors]
    elif not isinstance(tensors, (list, tuple)):
        return []
    losses = []
    for tensor in tensors:
        if not isinstance(tensor, torch.Tensor) or tensor.numel() != 1:
            return []  # a GradientEdge, or a non-scalar: not a loss
        losses.append(getattr(tensor, UNSCALED, tensor).reshape(()))
    return losses


def patch() -> None:
    backward = torch.autograd.backward

    @functools.wraps(backward)
    def watched_backward(tensors: Any, grad_tensors: Any = None, *args: Any, **kwargs: Any) -> Any:
        global _backward_depth
        if tracing_here():  # a prediction's trace beside the training (trace_thread): not the script's backward
            return backward(tensors, grad_tensors, *args, **kwargs)
        outermost = _backward_depth == 0 and grad_tensors is None and kwargs.get("grad_variables") is None
        if outermost:
            for capture in _active:
                if capture.timer is not None:  # the loss after the forward: counted in the forward
                    capture.timer.mark("forward")
        _backward_depth += 1
        try:
            result = backward(tensors, grad_tensors, *args, **kwargs)
        finally:
            _backward_depth -= 1
        if outermost and _active:
            for capture in list(_active):
                if capture.timer is not None:
                    capture.timer.mark("backward")
                try:
                    losses = losses_of(tensors)
                except Exception as exc:  # noqa: BLE001 - never the script's backward
                    capture.give_up(exc)
                    continue
                capture.backward_done(losses)  # a step when steps are backward()s: a stop may raise here
        return result

    scale = torch.amp.GradScaler.scale

    @functools.wraps(scale)
    def watched_scale(self: torch.amp.GradScaler, outputs: Any) -> Any:
        scaled = scale(self, outputs)
        if isinstance(outputs, torch.Tensor) and isinstance(scaled, torch.Tensor) and scaled is not outputs:
            try:
                setattr(scaled, UNSCALED, outputs.detach())
            except (AttributeError, TypeError):  # a tensor subclass without a __dict__: counted scaled
                pass
        return scaled

    step = torch.amp.GradScaler.step

    @functools.wraps(step)
    def watched_step(self: torch.amp.GradScaler, optimizer: Optimizer, *args: Any, **kwargs: Any) -> Any:
        for capture in _active:
            capture.stepped_in_scaler = False
        result = step(self, optimizer, *args, **kwargs)
        for capture in list(_active):
            if not capture.stepped_in_scaler:
                capture.skipped_step(optimizer)
        return result

    made = Optimizer.__init__

    @functools.wraps(made)
    def watched_init(self: Optimizer, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        if not tracing_here():
            optimizers_made[0] += 1

    for owner, name, patched in (
        (Optimizer, "__init__", watched_init),
        (torch.autograd, "backward", watched_backward),
        (torch.amp.GradScaler, "scale", watched_scale),
        (torch.amp.GradScaler, "step", watched_step),
    ):
        _originals.append((owner, name, getattr(owner, name)))
        setattr(owner, name, patched)


def unpatch() -> None:
    while _originals:
        owner, name, original = _originals.pop()
        setattr(owner, name, original)


class _FirstClosure:
    """A step's closure as the optimizer gets it: the first evaluation is the step's (its loss is the loss at the
    step's start, its forward one batch), every other one (LBFGS evaluates it up to 20 times) counts nothing. When
    the step already has a loss from before it, no evaluation counts."""

    def __init__(self, capture: StepCapture, closure: Callable[..., Any], counts: bool) -> None:
        self.capture, self.closure, self.counts = capture, closure, counts

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.counts:
            self.counts = False
            return self.closure(*args, **kwargs)
        self.capture.ignoring += 1
        try:
            return self.closure(*args, **kwargs)
        finally:
            self.capture.ignoring -= 1


def with_first_closure_counted(capture: StepCapture, args: Any, kwargs: Any) -> tuple[Any, Any] | None:
    """The step's arguments with its closure wrapped (an optimizer step pre-hook may hand them on changed); None
    when it has none."""
    counts = not capture.has_loss
    if callable(kwargs.get("closure")):
        return args, {**kwargs, "closure": _FirstClosure(capture, kwargs["closure"], counts)}
    if len(args) > 1 and callable(args[1]):  # step(self, closure)
        return (args[0], _FirstClosure(capture, args[1], counts), *args[2:]), kwargs
    return None
