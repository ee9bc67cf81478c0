"""Which module of a model is running now, in forward and (optionally) in backward: the context memory is
attributed by.

Process-wide module hooks (`torch.nn.modules.module.register_module_forward_pre_hook` and
`register_module_forward_hook`, public API) are installed only while `with context:` lasts, one sampled step:
nothing is added to a model's own hooks (they would be pickled with it by `torch.save` or `copy.deepcopy`) and
steps between samples pay nothing. Only modules of the model given count, and only on the thread that entered:
a prediction traced beside a training does not see the training's forward, nor the training the trace's.

Backward (asked with `backward=True`) follows torch's `torch.utils.module_tracker.ModuleTracker`: a module's
backward starts when the gradients of all its outputs are ready and ends when those of its inputs are
(`torch.autograd.graph.register_multi_grad_hook`); a module whose inputs need no gradient (the first layer) never
ends, so `clear()` is called once backward is done.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.utils._pytree import tree_flatten


class ModuleContext:
    """`with ModuleContext(model):` around a step; `current()` is the innermost module of `model` running now
    (None: no module of it, e.g. the loss). Without a model every module counts (a sampled step of a run, whose
    rows keep the model's modules only)."""

    def __init__(self, model: nn.Module | None = None, *, backward: bool = False) -> None:
        self._members = None if model is None else {id(m) for m in model.modules()}
        # depth in the model: a module's backward and its parent's start at the same gradient, inner one first
        named = model.named_modules() if model is not None else ()
        self._depth = {id(m): name.count(".") + 1 if name else 0 for name, m in named}
        self._backward = backward and hasattr(torch.autograd.graph, "register_multi_grad_hook")
        self._active: list[nn.Module] = []
        self._handles: list[Any] = []
        self._thread = 0

    def current(self) -> nn.Module | None:
        if not self._active:
            return None
        return max(reversed(self._active), key=lambda m: self._depth.get(id(m), 0))  # the deepest, then the latest

    def clear(self) -> None:
        """Backward is over: no module is running."""
        self._active.clear()

    def __enter__(self) -> ModuleContext:
        from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

        self._thread = threading.get_ident()
        self._active.clear()
        self._handles = [register_module_forward_pre_hook(self._entered), register_module_forward_hook(self._left)]
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._active.clear()

    def _ours(self, module: nn.Module) -> bool:
        member = self._members is None or id(module) in self._members
        return member and threading.get_ident() == self._thread

    def _entered(self, module: nn.Module, args: Any) -> None:
        if not self._ours(module):
            return
        self._active.append(module)
        if self._backward:  # its backward ends once its inputs' gradients are ready
            self._on_gradients(args, lambda: self._leave(module))

    def _left(self, module: nn.Module, args: Any, output: Any) -> None:
        if not self._ours(module):
            return
        self._leave(module)
        if self._backward:  # its backward starts once its outputs' gradients are ready
            self._on_gradients(output, lambda: self._active.append(module))

    def _leave(self, module: nn.Module) -> None:
        for index in range(len(self._active) - 1, -1, -1):
            if self._active[index] is module:
                del self._active[index]
                return

    def _on_gradients(self, values: Any, then: Callable[[], None]) -> None:
        tensors = [t for t in tree_flatten(values)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
        if tensors:  # "any": called at the first gradient, keeping none ("all" holds each until the last comes,
            # and until the step ends for a tensor no gradient reaches: memory the step itself would not hold)
            handle = torch.autograd.graph.register_multi_grad_hook(tensors, lambda _grad: then(), mode="any")
            self._handles.append(handle)
