"""A traced step's memory over time: every change of the live-bytes count (an allocation, a free, a resize) with
the module running then, turned once the step is done into a `StepTimeline` stacked by holder.

Which holder a storage belongs to is known only at the end (a gradient is a gradient once it is `.grad`; a tensor
is an activation once autograd saves it), so the trace keeps (storage key, bytes, module) per change, a few list
appends per operation, and classifies afterwards with numpy. A step makes hundreds to thousands of changes (resnet18:
about 400 at any batch size; a transformer: several per layer and head): past `MAX_POINTS` consecutive changes of
one phase are merged, keeping the highest point of each run, so the peak and the phase ends stay exact.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping

import numpy as np
import torch
from torch import nn

from ..events.module_bytes import OUTSIDE
from ..events.step_timeline import HOLDERS, StepTimeline, TimelinePoint
from .breakdown import SavedTensorCount
from .live_bytes import LiveBytes
from .module_context import ModuleContext
from .module_rows import row_of, top_blocks

MAX_POINTS = 2000
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
        count = len(self._keys)
        by_holder = np.zeros((count + 1, len(HOLDERS)), dtype=np.int64)
        for key, size in self._start.items():
            by_holder[0, holder_of.get(key, _TEMPORARIES)] += size
        if count:
            columns = np.fromiter((holder_of.get(key, _TEMPORARIES) for key in self._keys), np.int64, count)
            by_holder[np.arange(1, count + 1), columns] = np.asarray(self._deltas, dtype=np.int64)
        np.cumsum(by_holder, axis=0, out=by_holder)
        ends = [min(changes, count) for _, changes in self._marks]
        kept = _kept(by_holder.sum(axis=1), ends, self.max_points)
        phases = _phases(self._marks, count)
        names = _BlockNames(self.model)
        points = tuple(
            TimelinePoint(
                index,
                phases[index],
                names.of(self._modules[index - 1] if index else None),
                *(int(value) for value in by_holder[index]),
            )
            for index in kept
        )
        position = {index: at for at, index in enumerate(kept)}
        return StepTimeline(points, tuple((phase, position[end]) for (phase, _), end in zip(self._marks, ends)), count)


def _kept(totals: np.ndarray, ends: list[int], max_points: int) -> list[int]:
    """The points kept: all of them up to `max_points`, else the highest of each run of consecutive points within
    a phase, and the first, the last and each phase's end always."""
    if len(totals) <= max_points:
        return list(range(len(totals)))
    run = math.ceil(len(totals) / max_points)
    fixed = sorted({0, len(totals) - 1, *ends})
    kept = set(fixed)
    for start, stop in zip(fixed, fixed[1:]):
        for first in range(start + 1, stop, run):
            last = min(first + run, stop)
            kept.add(first + int(np.argmax(totals[first:last])))
    return sorted(kept)


def _phases(marks: list[tuple[str, int]], count: int) -> list[str]:
    """The phase of each point (point i follows change i - 1): the phase that had not ended yet, the last one
    after every mark."""
    phases: list[str] = []
    start = 0
    for phase, changes in marks:
        phases += [phase] * (min(changes, count) + 1 - start)
        start = len(phases)
    last = marks[-1][0] if marks else "step"
    return phases + [last] * (count + 1 - len(phases))


class _BlockNames:
    """A module's row name (its block: gpu_train_monitor.memory.module_rows), cached by module."""

    def __init__(self, model: nn.Module) -> None:
        self._model = model
        self._paths = {id(module): name for name, module in model.named_modules()}
        self._blocks = top_blocks(model)
        self._names: dict[int, str] = {}

    def of(self, module: nn.Module | None) -> str:
        if module is None:
            return OUTSIDE
        name = self._names.get(id(module))
        if name is None:
            path = self._paths.get(id(module))
            name = OUTSIDE if path is None else row_of(path, self._blocks, self._model)
            self._names[id(module)] = name
        return name
