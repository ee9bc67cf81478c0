"""A CUDA step's memory over time, measured: the caching allocator's history (`torch.cuda.memory.
_record_memory_history`, private API, wrapped here) recorded for one sampled step only, on just before it and off
right after it (the step's trace read with `torch.cuda.memory._snapshot()`), so the steps between samples pay
nothing. The result is the `StepTimeline` a prediction has, so the window draws both alike.

How the trace is read (`trace_timeline`, torch-free):
- An allocation lives from its `alloc` to its `free_completed` (gpu_train_monitor.memory.snapshot_reader's replay);
  sizes are the bytes requested.
- Its holder, by the address of its block: a block still live at the step's end that holds a parameter or buffer,
  optimizer state, the batch or a gradient is that; a block autograd saved for backward and live when the forward
  ended is an activation; any other block the step allocated is a temporary.
- Blocks allocated before the step and live all through it (the weights, the optimizer state, the batch) start the
  timeline, each in its holder; blocks allocated before it and freed in it (the previous step's gradients, freed by
  `zero_grad`) are left out, as a prediction, which starts without them, leaves them out.
- Phase ends and the module running: the host's wall clock read at each phase's end and each change of module,
  against the trace's `time_us` (the same wall clock, taken on the host when the allocation was asked for).
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from ..events.module_bytes import OUTSIDE
from ..events.step_timeline import HOLDERS, StepTimeline
from .module_context import ModuleContext
from .snapshot import unsupported_reason
from .snapshot_reader import replay_trace
from .timeline_points import BlockNames, assemble

MAX_ENTRIES = 500_000  # allocator events kept for the one step: a large transformer's step makes ~100k
MEASURED_POINTS = 500  # points kept: a timeline travels in a MemoryBreakdown and the run store keeps it
_TEMPORARIES = HOLDERS.index("temporaries_bytes")
_ACTIVATIONS = HOLDERS.index("activations_bytes")
# a block in several holders counts in the first (a weight the batch aliases is a parameter)
_ORDER = ("params_bytes", "optimizer_bytes", "batch_bytes", "grads_bytes")


def _now_us() -> int:
    return time.time_ns() // 1000


class AllocatorTimeline:
    """`start()` just before the sampled step; `mark(phase)` at each phase's end; `saved(tensor)` for each tensor
    autograd saves; `stop()` right after the step (recording off, the trace kept); then `timeline(...)`."""

    def __init__(
        self, device: torch.device, context: ModuleContext | None = None, max_entries: int = MAX_ENTRIES
    ) -> None:
        self.device = device
        self.context = context
        self.max_entries = max_entries
        self._since_us = 0
        self._marks: list[tuple[str, int]] = []
        self._changes: list[tuple[int, nn.Module | None]] = []  # (time, module running from then on)
        self._saved: set[int] = set()
        self._trace: list[dict[str, Any]] | None = None
        self.recording = False

    @staticmethod
    def supported(device: torch.device) -> bool:
        return unsupported_reason(device) is None

    def start(self) -> None:
        self._since_us = _now_us()
        options: dict[str, Any] = {"context": None, "max_entries": self.max_entries}  # no stacks: the cheapest
        try:
            torch.cuda.memory._record_memory_history("all", clear_history=True, **options)
        except TypeError:  # a torch without clear_history: the events before `start` are dropped by time
            torch.cuda.memory._record_memory_history("all", **options)
        self.recording = True
        if self.context is not None:
            self.context.on_change = self._module_changed

    def _module_changed(self) -> None:
        assert self.context is not None
        self._changes.append((_now_us(), self.context.current()))

    def mark(self, phase: str) -> None:
        self._marks.append((phase, _now_us()))
        if self.context is not None and self.recording:  # the module running from here (none once backward ends)
            self._module_changed()

    def saved(self, tensor: torch.Tensor) -> None:
        if tensor.device.type == "cuda":
            self._saved.add(tensor.untyped_storage().data_ptr())

    def stop(self, keep: bool = True) -> None:
        """Recording off; `keep`: the step's trace read first (a failed step's is dropped)."""
        if not self.recording:
            return
        try:
            if keep:
                snapshot = torch.cuda.memory._snapshot()
                traces = snapshot.get("device_traces", [])
                index = self.device.index if self.device.index is not None else torch.cuda.current_device()
                self._trace = list(traces[index]) if index < len(traces) else []
        except Exception:  # noqa: BLE001 - a private API that changed: no timeline, never a failed step
            self._trace = None
        finally:
            torch.cuda.memory._record_memory_history(enabled=None)
            self.recording = False
            if self.context is not None:
                self.context.on_change = None

    def timeline(
        self, model: nn.Module, optimizers: Sequence[torch.optim.Optimizer], batch: Sequence[torch.Tensor]
    ) -> StepTimeline:
        """The step's timeline (empty when no trace was kept), holders read from the objects now."""
        if self._trace is None:
            return StepTimeline()
        names = BlockNames(model)
        changes = [(at, names.of(module)) for at, module in self._changes]
        holders = step_holders(model, optimizers, batch)
        trace, self._trace = self._trace, None
        return trace_timeline(trace, self._since_us, holders, self._saved, self._marks, changes)


def step_holders(
    model: nn.Module, optimizers: Sequence[torch.optim.Optimizer], batch: Sequence[torch.Tensor]
) -> dict[int, tuple[int, int]]:
    """Block address -> (holder, bytes) of every CUDA storage the step's objects hold (HOLDERS' positions)."""
    groups: dict[str, Iterable[torch.Tensor]] = {
        "params_bytes": [*model.parameters(), *model.buffers()],
        "optimizer_bytes": (
            v for o in optimizers for state in o.state.values() for v in state.values() if isinstance(v, torch.Tensor)
        ),
        "batch_bytes": batch,
        "grads_bytes": (p.grad for p in model.parameters() if p.grad is not None),
    }
    holders: dict[int, tuple[int, int]] = {}
    for name in _ORDER:
        for tensor in groups[name]:
            if tensor.device.type != "cuda":
                continue
            storage = tensor.untyped_storage()
            holders.setdefault(storage.data_ptr(), (HOLDERS.index(name), storage.nbytes()))
    return holders


def trace_timeline(
    trace: Sequence[Mapping[str, Any]],
    since_us: int,
    holders: Mapping[int, tuple[int, int]],
    saved: set[int],
    marks: Sequence[tuple[str, int]],
    modules: Sequence[tuple[int, str]] = (),
    max_points: int = MEASURED_POINTS,
) -> StepTimeline:
    """The timeline of one step's allocator trace (see the module doc). `since_us`: when recording began (earlier
    events are dropped); `holders`: block address -> (holder, bytes) at the step's end; `saved`: the addresses
    of what autograd saved; `marks`: (phase, time it ended); `modules`: (time, block running from then on)."""
    if _same_clock(trace, since_us):
        events = [e for e in trace if int(e.get("time_us", since_us)) >= since_us]
    else:  # events, phases and modules cannot be placed by time: every event, no phase ends
        events, marks, modules = list(trace), (), ()
    n = len(events)
    times = np.fromiter((int(e.get("time_us", since_us)) for e in events), dtype=np.int64, count=n)
    times = np.maximum.accumulate(times) if n else times
    replayed = replay_trace(events, [])
    forward_end = _events_by(times, marks, "forward")
    changes: list[tuple[int, int, int]] = []  # (event, holder, bytes)
    live_at_end: set[int] = set()
    for start, end, size, address in zip(
        replayed.starts.tolist(), replayed.ends.tolist(), replayed.sizes.tolist(), replayed.addresses
    ):
        if start < 0:  # allocated before the step, freed in it: not counted (see the module doc)
            continue
        if end >= n and address in holders:
            column = holders[address][0]
            live_at_end.add(address)
        elif address in saved and start < forward_end <= end:
            column = _ACTIVATIONS
        else:
            column = _TEMPORARIES
        changes.append((start, column, size))
        if end < n:
            changes.append((end, column, -size))
    changes.sort(key=lambda change: change[0])
    start_row = np.zeros(len(HOLDERS), dtype=np.int64)
    for address, (column, size) in holders.items():
        if address not in live_at_end:
            start_row[column] += size
    at_event = np.fromiter((event for event, _, _ in changes), dtype=np.int64, count=len(changes))
    ends = [(phase, int(np.searchsorted(at_event, _events_by(times, marks, phase)))) for phase, _ in marks]
    module_times = [at for at, _ in modules]

    def module_at(point: int) -> str:
        if point == 0 or not modules:
            return OUTSIDE
        at = int(times[at_event[point - 1]])
        found = bisect.bisect_right(module_times, at) - 1
        return modules[found][1] if found >= 0 else OUTSIDE

    return assemble(
        start_row,
        np.fromiter((column for _, column, _ in changes), dtype=np.int64, count=len(changes)),
        np.fromiter((size for _, _, size in changes), dtype=np.int64, count=len(changes)),
        ends,
        module_at,
        max_points,
    )


def _same_clock(trace: Sequence[Mapping[str, Any]], since_us: int) -> bool:
    """Whether the trace's times are the host's wall clock (its last event no earlier than recording began, and
    not an hour later)."""
    last = int(trace[-1].get("time_us", since_us)) if trace else since_us
    return since_us <= last <= since_us + 3_600_000_000


def _events_by(times: np.ndarray, marks: Sequence[tuple[str, int]], phase: str) -> int:
    """How many of the trace's events came before `phase` ended (all of them when it is not marked)."""
    at = next((at for name, at in marks if name == phase), None)
    return len(times) if at is None else int(np.searchsorted(times, at, side="right"))
