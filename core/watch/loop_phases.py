"""Where the steps of a loop watched through `watch(model, optimizer)` spend their time, from hooks on the very model
and optimizers it was given (a `watch --` script's come from its capture's global hooks instead): data wait from the
last optimizer step's end (or the watch's own `step()`) to the model's next training forward, the forward, backward
from there to the last gradient accumulated, the optimizer step, and the watch's recording in `Watch.step()`.

The forward hooks mark only training forwards (gradients enabled): an evaluation inside the loop counts as data
wait. A loss computed outside the model counts as backward. A gradient's accumulation only takes the time (one
`perf_counter()`, no CUDA event; after the first backward, of the parameter whose gradient came last only): the
backward's end is marked at the next forward or optimizer step.
Hooks inside code torch.compile traces do nothing, so a compiled forward counts as backward. Every hook is left
out of the model's and optimizers' pickles and copies (gpu_train_monitor.watch.model_hooks), and all are removed
when the watch ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from time import perf_counter
from typing import Any

import torch
from torch import nn
from torch.utils.hooks import RemovableHandle

from ..engine.step_phases import PhaseTimer
from .model_hooks import ModelHook, forward_hook, forward_pre_hook
from .trace_thread import tracing_here


class LoopPhases:
    """Hooks that tell `timer` where each step of a watched loop's phases end; `remove()` takes them all off."""

    def __init__(self, timer: PhaseTimer, model: nn.Module, optimizers: Sequence[torch.optim.Optimizer]) -> None:
        self._timer = timer
        self._grads_done: float | None = None  # when the last gradient was accumulated, until the next mark
        self._last: torch.Tensor | None = None  # the parameter whose gradient came last
        self._handles: list[RemovableHandle] = [
            forward_pre_hook(model, self._forward_starts),
            forward_hook(model, self._forward_ends),
        ]
        # every parameter's until the first backward has shown whose gradient comes last (the first layer's,
        # usually); that one's alone from then on: one hook call a backward, not one per parameter
        self._gradient_hooks = {
            id(param): param.register_post_accumulate_grad_hook(ModelHook(self._accumulated))
            for param in model.parameters()
            if param.requires_grad
        }
        for optimizer in optimizers:
            self._handles.append(optimizer.register_step_pre_hook(ModelHook(self._update_starts)))
            self._handles.append(optimizer.register_step_post_hook(ModelHook(self._update_ends)))

    def remove(self) -> None:
        for handle in [*self._handles, *self._gradient_hooks.values()]:
            handle.remove()
        self._handles, self._gradient_hooks, self._last = [], {}, None

    def _ours(self) -> bool:
        """Whether a hook call is the training's: not a forward torch.compile traces, nor a prediction's trace."""
        return not torch.compiler.is_compiling() and not tracing_here()

    def _backward_ended(self) -> None:
        if self._grads_done is not None:
            self._timer.mark_at("backward", self._grads_done)
            self._grads_done = None
            if self._last is not None and len(self._gradient_hooks) > 1:
                last = id(self._last)
                for key, handle in list(self._gradient_hooks.items()):
                    if key != last:
                        handle.remove()
                        del self._gradient_hooks[key]
            self._last = None

    def _forward_starts(self, module: nn.Module, args: Any, kwargs: Any) -> None:
        if torch.is_grad_enabled() and self._ours():  # a training forward: its batch is ready
            self._backward_ended()  # gradient accumulation: the previous micro-batch's backward
            self._timer.mark("data")

    def _forward_ends(self, module: nn.Module, args: Any, kwargs: Any, output: Any) -> None:
        if torch.is_grad_enabled() and self._ours():
            self._timer.mark("forward")

    def _accumulated(self, param: torch.Tensor) -> None:
        if not tracing_here():
            self._grads_done, self._last = perf_counter(), param

    def _update_starts(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        if self._ours():
            self._backward_ended()

    def _update_ends(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        if self._ours():  # since the backward: clipping, unscaling, the update
            self._timer.mark("optimizer")


def timed_loop(
    model: nn.Module, optimizers: Sequence[torch.optim.Optimizer], device: torch.device
) -> tuple[PhaseTimer, LoopPhases]:
    """A timer of the loop's steps from now (on a CUDA `device`, its own clock too) and the hooks that mark it."""
    timer = PhaseTimer()
    timer.on_device(device)
    hooks = LoopPhases(timer, model, optimizers)
    timer.start()
    return timer, hooks
