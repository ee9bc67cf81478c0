"""A step's changes of live bytes made into a `StepTimeline`: the running sums by holder, the points kept (past a
bound, the highest of each run of consecutive changes within a phase, and always the first, the last and each
phase's end, so the peak and the phase ends stay exact), each point's phase and the block of the model running.
Shared by the timeline predicted from a traced step and the one measured from the CUDA allocator's history.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from torch import nn

from ..events.module_bytes import OUTSIDE
from ..events.step_timeline import HOLDERS, StepTimeline, TimelinePoint
from .module_rows import row_of, top_blocks

MAX_POINTS = 2000


def assemble(
    start: np.ndarray,
    columns: np.ndarray,
    deltas: np.ndarray,
    marks: Sequence[tuple[str, int]],
    module_at: Callable[[int], str],
    max_points: int = MAX_POINTS,
) -> StepTimeline:
    """A timeline from the bytes live at the start by holder (`start`, HOLDERS' order) and the step's changes, in
    order: change i adds `deltas[i]` bytes (taken when negative) to holder `columns[i]`. `marks`: (phase that ended,
    changes made before its end); `module_at(point)`: the block running at a point (point i follows change i - 1),
    asked only for the points kept."""
    count = len(deltas)
    by_holder = np.zeros((count + 1, len(HOLDERS)), dtype=np.int64)
    by_holder[0] = start
    if count:
        by_holder[np.arange(1, count + 1), columns] = deltas
    np.cumsum(by_holder, axis=0, out=by_holder)
    ends = [min(changes, count) for _, changes in marks]
    kept = _kept(by_holder.sum(axis=1), ends, max_points)
    phases = _phases(list(marks), count)
    points = tuple(
        TimelinePoint(index, phases[index], module_at(index), *(int(value) for value in by_holder[index]))
        for index in kept
    )
    position = {index: at for at, index in enumerate(kept)}
    return StepTimeline(points, tuple((phase, position[end]) for (phase, _), end in zip(marks, ends)), count)


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


class BlockNames:
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
