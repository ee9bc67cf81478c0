"""A traced step's memory over time: every change of the live-bytes count (an allocation, a free, a resize) with
the module running then, turned once the step is done into a `StepTimeline` stacked by holder.

Which holder a storage belongs to is known only at the end (a gradient is a gradient once it is `.grad`; a tensor
is an activation once autograd saves it), so the trace keeps (storage key, bytes, module) per change, a few list
appends per operation, and classifies afterwards with numpy. A step makes hundreds to thousands of changes (resnet18:
about 400 at any batch size; a transformer: several per layer and head): past `MAX_POINTS` they are merged
(gpu_train_monitor.memory.timeline_points), keeping the peak and the phase ends exact.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

import numpy as np
import torch
from torch import nn

from ..events.step_timeline import HOLDERS, StepTimeline
from .breakdown import SavedTensorCount
from .live_bytes import LiveBytes
from .module_context import ModuleContext
from .timeline_points import MAX_POINTS, BlockNames, assemble

_TEMPORARIES = HOLDERS.index("temporaries_bytes")
# a storage in several holders counts in the first: a weight autograd saves is a parameter, not an activation
_PRIORITY = ("params_bytes", "optimizer_bytes", "batch_bytes", "grads_bytes", "activations_bytes")


class TimelineTrace:
    """`with trace.following(tracker, saved):` inside the step's other followers (it passes their callbacks on);
    then `timeline(holders)`."""

    def __init__(self, model: nn.Module, context: ModuleContext, max_points: int = MAX_POINTS) -> None:
        self.model = model
        self.context = context
        self.max_points = max_points
        self._keys: list[int] = []
        self._deltas: list[int] = []
        self._modules: list[nn.Module | None] = []
        self._marks: list[tuple[str, int]] = []  # (phase that ended, changes before its end)
        self._start: dict[int, int] = {}
        self._saved: set[int] = set()

    @property
    def saved_keys(self) -> set[int]:
        """The storages autograd saved for backward during the step."""
        return set(self._saved)

    @contextlib.contextmanager
    def following(self, tracker: LiveBytes, saved: SavedTensorCount) -> Iterator[None]:
        self._start = tracker.live()
        on_mark, on_pack = tracker.on_mark, saved.on_pack

        def marked(phase: str) -> None:
            self._marks.append((phase, len(self._keys)))
            if on_mark is not None:
                on_mark(phase)

        def packed(tensor: torch.Tensor) -> None:
            key = tracker.key_of(tensor)
            if key is not None:
                self._saved.add(key)
            if on_pack is not None:
                on_pack(tensor)

        tracker.on_change, tracker.on_mark, saved.on_pack = self._changed, marked, packed
        try:
            yield
        finally:
            tracker.on_change, tracker.on_mark, saved.on_pack = None, on_mark, on_pack

    def _changed(self, key: int, delta: int) -> None:
        self._keys.append(key)
        self._deltas.append(delta)
        self._modules.append(self.context.current())

    def timeline(self, holders: Mapping[str, set[int]]) -> StepTimeline:
        """The step's timeline; `holders`: the storage keys of each holder but temporaries (HOLDERS' names;
        activations default to what autograd saved)."""
        holders = {"activations_bytes": self._saved, **holders}
        holder_of: dict[int, int] = {}
        for name in reversed(_PRIORITY):
            holder_of.update(dict.fromkeys(holders.get(name, ()), HOLDERS.index(name)))
        start = np.zeros(len(HOLDERS), dtype=np.int64)
        for key, size in self._start.items():
            start[holder_of.get(key, _TEMPORARIES)] += size
        count = len(self._keys)
        columns = np.fromiter((holder_of.get(key, _TEMPORARIES) for key in self._keys), np.int64, count)
        names = BlockNames(self.model)
        return assemble(
            start,
            columns,
            np.asarray(self._deltas, dtype=np.int64),
            self._marks,
            lambda index: names.of(self._modules[index - 1] if index else None),
            self.max_points,
        )
