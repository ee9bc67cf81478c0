"""A traced step's peak by module: which module made each storage the live-bytes count sees, and which module
saved it for backward, turned into rows (gpu_train_monitor.memory.module_rows) that add up to the peak.

At the peak each live storage is one of: a parameter or buffer (its module's), the optimizer's state (its
parameter's module), the batch (`OUTSIDE`, as activations: the first layer keeps it for backward), a gradient (its
parameter's module), saved for backward (activations of the module that saved it: a convolution keeps its input,
made by the layer before), or a temporary (of the module that made it, in forward or backward; the loss's and the
optimizer's are `OUTSIDE`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence

import torch
from torch import nn

from ..events.module_bytes import ModuleBytes
from .breakdown import SavedTensorCount
from .live_bytes import LiveBytes
from .module_context import ModuleContext
from .module_rows import Entry, module_rows


class TracedModules:
    """Follows one traced step (`with attribution.following(tracker, saved):` around it) and gives its rows."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.context = ModuleContext(model, backward=True)
        self._made: dict[int, nn.Module | None] = {}  # storage key -> the module that made it
        self._saved: dict[int, nn.Module | None] = {}  # storage key -> the module that saved it first
        self._tracker: LiveBytes | None = None

    @contextlib.contextmanager
    def following(self, tracker: LiveBytes, saved: SavedTensorCount) -> Iterator[None]:
        self._tracker = tracker
        tracker.on_new, tracker.on_mark, saved.on_pack = self._made_now, self._marked, self._saved_now
        try:
            with self.context:
                yield
        finally:
            tracker.on_new = tracker.on_mark = saved.on_pack = None

    def _made_now(self, key: int) -> None:
        self._made[key] = self.context.current()

    def _saved_now(self, tensor: torch.Tensor) -> None:
        key = self._tracker.key_of(tensor) if self._tracker is not None else None
        if key is not None and key not in self._saved:
            self._saved[key] = self.context.current()

    def _marked(self, phase: str) -> None:
        if phase == "backward":  # modules whose inputs needed no gradient never say their backward ended
            self.context.clear()

    def rows(
        self, at_peak: dict[int, int], parts: dict[str, set[int]], optimizers: Sequence[torch.optim.Optimizer]
    ) -> tuple[ModuleBytes, ...]:
        """The rows of the storages live at the peak (`at_peak`: key -> bytes); `parts`: the keys of "params",
        "state", "batch" and "grads" as the prediction counts them."""
        assert self._tracker is not None
        owners = self._owners(self._tracker, optimizers)
        entries: list[Entry] = []
        for key, nbytes in at_peak.items():
            if key in parts["params"]:
                entries.append((owners["params"].get(key), "params_bytes", nbytes))
            elif key in parts["state"]:
                entries.append((owners["state"].get(key), "optimizer_bytes", nbytes))
            elif key in parts["batch"]:
                entries.append((None, "activations_bytes", nbytes))
            elif key in parts["grads"]:
                entries.append((owners["grads"].get(key), "grads_bytes", nbytes))
            elif key in self._saved:
                entries.append((self._saved[key], "activations_bytes", nbytes))
            else:
                entries.append((self._made.get(key), "temporaries_bytes", nbytes))
        return module_rows(self.model, entries)

    def _owners(
        self, tracker: LiveBytes, optimizers: Sequence[torch.optim.Optimizer]
    ) -> dict[str, dict[int, nn.Module]]:
        """Storage key -> module, for each module's own parameters and buffers, their gradients and their state."""
        params: dict[int, nn.Module] = {}
        grads: dict[int, nn.Module] = {}
        of_param: dict[int, nn.Module] = {}
        for module in self.model.modules():
            for param in module._parameters.values():
                if param is None or id(param) in of_param:
                    continue
                of_param[id(param)] = module
                _own(params, tracker.key_of(param), module)
                if param.grad is not None:
                    _own(grads, tracker.key_of(param.grad), module)
            for buffer in module._buffers.values():
                if buffer is not None:
                    _own(params, tracker.key_of(buffer), module)
        state: dict[int, nn.Module] = {}
        for optimizer in optimizers:
            for param, values in optimizer.state.items():
                module = of_param.get(id(param))
                if module is not None:
                    for key in tracker.keys_of(_tensors(values.values())):
                        _own(state, key, module)
        return {"params": params, "grads": grads, "state": state}


def _own(owners: dict[int, nn.Module], key: int | None, module: nn.Module) -> None:
    if key is not None:
        owners.setdefault(key, module)


def _tensors(values: Iterable[object]) -> Iterator[torch.Tensor]:
    return (value for value in values if isinstance(value, torch.Tensor))
