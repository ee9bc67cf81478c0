"""The hooks the watch puts on a user's own objects (the model's forward hook, a tensor's gradient hook), made so that
those objects pickle and copy exactly as they would unwatched.

A hook torch keeps on a module lives in the module's `__dict__`, so `torch.save(model, f)` and `copy.deepcopy(model)`
would take it along, and with it everything it refers to: our recorder and its SQLite connection, which cannot be
pickled (a script that keeps an EMA or a best-model copy, or saves whole models, would crash at its first save). So:

- `nn.Module.__getstate__`, which both pickling and deep-copying read, leaves our hooks out: a saved model holds no
  trace of the watch (it loads where our package is not installed) and a copy is not watched (an EMA copy's forward
  is not the model's training forward).
- A `ModelHook` that reaches pickle or deepcopy anyway (a module class whose own `__getstate__` does not call
  torch's) becomes a no-op made of the standard library alone, holding nothing of ours.

The patch of `__getstate__` stays for the process's life once made: it changes nothing for a module without our
hooks (one look at two dictionaries), and a module may keep a hook of ours after the watch has ended.
"""

from __future__ import annotations

import functools
import sys
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.utils.hooks import RemovableHandle

DROPPED = "gpu_train_monitor.watch.dropped_hook"  # the audit event a dropped hook raises (nobody listens to it)
_HOOKS = ("_forward_hooks", "_forward_pre_hooks")
_HOOK_FLAGS = ("_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_forward_pre_hooks_with_kwargs")
_PATCHED = "_gpu_train_monitor_patched"


class ModelHook:
    """A hook of ours on a user's object: calls `call` (None: does nothing). Pickled or copied, it is a no-op that
    refers to nothing of the watch."""

    def __init__(self, call: Callable[..., Any] | None) -> None:
        self._call = call

    def __call__(self, *args: Any) -> None:
        call = self._call
        if call is not None:
            call(*args)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # a callable of the standard library's that takes any arguments and returns None: loads anywhere
        return functools.partial, (sys.audit, DROPPED)

    def __deepcopy__(self, memo: dict[int, Any]) -> ModelHook:
        return ModelHook(None)


def forward_hook(module: nn.Module, call: Callable[..., Any]) -> RemovableHandle:
    """`call(module, args, kwargs, output)` after each forward of `module`, left out of its pickles and copies."""
    _leave_ours_out_of_pickles()
    return module.register_forward_hook(ModelHook(call), with_kwargs=True)


def forward_pre_hook(module: nn.Module, call: Callable[..., Any]) -> RemovableHandle:
    """`call(module, args, kwargs)` before each forward of `module`, left out of its pickles and copies."""
    _leave_ours_out_of_pickles()
    return module.register_forward_pre_hook(ModelHook(call), with_kwargs=True)


def gradient_hook(tensor: torch.Tensor, call: Callable[[torch.Tensor], Any]) -> None:
    """`call(gradient)` when backward reaches `tensor` (a model's output); nothing of ours if it is pickled."""
    tensor.register_hook(ModelHook(call))


def _leave_ours_out_of_pickles() -> None:
    current = nn.Module.__getstate__
    if getattr(current, _PATCHED, False):
        return

    @functools.wraps(current)
    def getstate_without_ours(self: nn.Module) -> Any:
        return without_our_hooks(current(self))

    setattr(getstate_without_ours, _PATCHED, True)
    nn.Module.__getstate__ = getstate_without_ours  # type: ignore[method-assign]


def without_our_hooks(state: Any) -> Any:
    """A module's pickled state (a shallow copy of its `__dict__`) without our hooks: the dictionaries that hold
    one are replaced by copies without it; the live module keeps its own."""
    if not isinstance(state, dict):
        return state
    ours: set[int] = set()
    for name in _HOOKS:
        hooks = state.get(name)
        if hooks and any(isinstance(hook, ModelHook) for hook in hooks.values()):
            ours.update(key for key, hook in hooks.items() if isinstance(hook, ModelHook))
            state[name] = OrderedDict((key, hook) for key, hook in hooks.items() if not isinstance(hook, ModelHook))
    if ours:
        for name in _HOOK_FLAGS:
            flags = state.get(name)
            if flags and any(key in ours for key in flags):
                state[name] = OrderedDict((key, value) for key, value in flags.items() if key not in ours)
    return state
