"""What holds the memory of a training step: parameters, gradients, optimizer state, the batch, and
activations + workspace; plus the peak of each phase (forward, backward, optimizer step).

Sizes of parameters, gradients and optimizer state are read from the tensors themselves. The rest
comes from the allocator on CUDA: the step's peak minus everything else (activations and cuDNN/cuBLAS
workspace). The CPU and MPS have no peak counters, so there activations are the bytes autograd saves
for backward (a `saved_tensors_hooks` count), and phase "peaks" are the memory at each phase's end.
Only sampled steps are measured (one per report), and only host-side counters are read: no sync.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator

import torch
from torch import nn

from ..events.events import PHASES, MemoryBreakdown
from ..events.module_bytes import ModuleBytes
from .measured_modules import AttributionSchedule, measured_rows
from .module_context import ModuleContext
from .probe import MemoryProbe

_COUNTING = threading.local()  # .recorder: the recorder counting this thread's saved tensors, during its step


def measuring_saved_tensors() -> SavedTensorCount | None:
    """The recorder counting saved tensors on this thread's step, or None: activation checkpointing reports to it
    what a block's recomputation holds in backward, which autograd's hooks do not see."""
    return getattr(_COUNTING, "recorder", None)


def _unique_bytes(tensors: Iterable[torch.Tensor], device: torch.device | None = None) -> int:
    """Bytes of distinct tensors (tied weights counted once), optionally only those on `device`."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for t in tensors:
        if device is not None and t.device.type != device.type:
            continue
        key = (t.data_ptr(), t.nelement())
        if key in seen:
            continue
        seen.add(key)
        total += t.nelement() * t.element_size()
    return total


def params_bytes(model: nn.Module) -> int:
    return _unique_bytes(list(model.parameters()) + list(model.buffers()))


def grads_bytes(model: nn.Module) -> int:
    return _unique_bytes(p.grad for p in model.parameters() if p.grad is not None)


def optimizer_bytes(optimizer: torch.optim.Optimizer, device: torch.device) -> int:
    """State tensors on the training device (AdamW's CPU step counters are not device memory)."""
    tensors = (v for state in optimizer.state.values() for v in state.values() if isinstance(v, torch.Tensor))
    return _unique_bytes(tensors, device)


def storage_key(tensor: torch.Tensor) -> int:
    """The identity of the storage behind `tensor` while it lives, for fake tensors too (whose data pointers are
    all 0)."""
    return tensor.untyped_storage()._cdata


class SavedTensorCount:
    """The bytes autograd saves for backward while `counting()` (a `saved_tensors_hooks` count), and what activation
    checkpointing reports of its blocks' recomputation, which those hooks do not see: a step's activations where no
    allocator counts them (the CPU, MPS), and the same count on a step traced on fake tensors (a prediction), so the
    two are comparable."""

    def __init__(self, context: ModuleContext | None = None) -> None:
        self._saved: dict[int, int] = {}
        self._context = context  # given: which module saved each storage is kept too (`by_module`)
        self._savers: dict[int, nn.Module | None] = {}
        self.on_pack: Callable[[torch.Tensor], None] | None = None  # told each tensor saved (a traced step's)
        self._block_inputs: list[int] = []  # bytes each checkpointed block keeps for backward, in forward order
        self._recomputed: dict[int, int] = {}  # block -> bytes its recomputation held in backward

    @contextlib.contextmanager
    def counting(self) -> Iterator[None]:
        before = getattr(_COUNTING, "recorder", None)
        _COUNTING.recorder = self
        try:
            with torch.autograd.graph.saved_tensors_hooks(self._pack, lambda t: t):
                yield
        finally:
            _COUNTING.recorder = before

    def note_checkpointed(self, input_bytes: int) -> int:
        """A checkpointed block ran forward keeping `input_bytes` of inputs: its index for `note_recomputed`."""
        self._block_inputs.append(input_bytes)
        return len(self._block_inputs) - 1

    def note_recomputed(self, block: int, nbytes: int) -> None:
        """Checkpointed `block`'s recomputation held `nbytes` in backward."""
        self._recomputed[block] = max(self._recomputed.get(block, 0), nbytes)

    def activations_bytes(self, own: Iterable[torch.Tensor]) -> int:
        """What was saved, less the storages of `own` (weights and inputs autograd also saves, counted as
        parameters and batch already), plus what checkpointed blocks' recomputation held."""
        mine = {storage_key(t) for t in own}
        return sum(n for key, n in self._saved.items() if key not in mine) + self._recomputation_bytes()

    def by_module(self, own: Iterable[torch.Tensor]) -> list[tuple[nn.Module | None, int]]:
        """`activations_bytes(own)` by the module that saved each storage (None: no module of the model, and what
        checkpointed blocks' recomputation held)."""
        mine = {storage_key(t) for t in own}
        rows = [(self._savers.get(key), n) for key, n in self._saved.items() if key not in mine]
        return [*rows, (None, self._recomputation_bytes())]

    def _recomputation_bytes(self) -> int:
        """What the saved count misses with activation checkpointing: a block recomputes in backward once the
        blocks after it are done (their inputs freed), so the largest of its held bytes less those inputs; an
        upper bound, as the saved count keeps everything else saved alive all along."""
        later = [sum(self._block_inputs[block + 1 :]) for block in self._recomputed]
        return max((max(held - after, 0) for held, after in zip(self._recomputed.values(), later)), default=0)

    def _pack(self, tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        self._saved[storage._cdata] = storage.nbytes()
        if self._context is not None:
            self._savers.setdefault(storage._cdata, self._context.current())
        if self.on_pack is not None:
            self.on_pack(tensor)
        # detach(): returning the tensor itself makes a reference cycle through autograd's C++ graph
        # (torch's saved_tensors_hooks docs) that gc cannot break: a step that fails before backward
        # (out of memory) would keep its batch and activations alive
        return tensor.detach()


class StepMemoryRecorder:
    """Measures one step at phase boundaries. Use `with recorder.step():` around a training step and
    call `recorder.mark(phase)` after each phase; then `breakdown(...)`."""

    def __init__(self, probe: MemoryProbe, *, by_module: bool = True) -> None:
        self.probe = probe
        self.by_module = by_module  # split a sampled step by module now and then (AttributionSchedule)
        self.device = probe.device
        self.uses_allocator = self.device.type == "cuda"
        self._peaks: dict[str, int] = {}
        self._saved = SavedTensorCount()
        self.attribution = AttributionSchedule()  # which sampled steps are also measured by module
        self._context: ModuleContext | None = None

    @contextlib.contextmanager
    def step(self) -> Iterator[None]:
        self._peaks = {}
        self._context = ModuleContext() if self.by_module and self.attribution.due() else None
        self._saved = SavedTensorCount(self._context)
        with contextlib.ExitStack() as stack:
            if self._context is not None:
                stack.enter_context(self._context)
            if self.uses_allocator:
                self.probe.reset_phase_peak()
            if not self.uses_allocator or self._context is not None:  # CUDA counts saved bytes by module only
                stack.enter_context(self._saved.counting())
            yield

    def mark(self, phase: str) -> None:
        if self.uses_allocator:
            self._peaks[phase] = self.probe.reset_phase_peak()
        else:  # the process's resident memory: one cheap read, not a whole MemorySample
            self._peaks[phase] = self.probe.rss_bytes()

    def breakdown(
        self,
        step: int,
        model: nn.Module,
        optimizer: torch.optim.Optimizer,
        images: torch.Tensor,
        labels: torch.Tensor,
        other_bytes: int = 0,
    ) -> MemoryBreakdown:
        """`other_bytes`: device memory held by neither the model nor the step (a resident dataset and
        its per-epoch buffers), shown as its own row instead of being counted as activations."""
        p, g = params_bytes(model), grads_bytes(model)
        o = optimizer_bytes(optimizer, self.device)
        b = _unique_bytes([images, labels])
        if self.uses_allocator:
            step_peak = max(self._peaks.values(), default=0)
            activations = max(step_peak - other_bytes - p - g - o - b, 0)
            method = "allocator"
        else:  # autograd also saves weights and inputs: those are counted as params and batch already
            activations = self._saved.activations_bytes([*model.parameters(), *model.buffers(), images, labels])
            method = "saved-tensors"
        peaks = tuple((phase, self._peaks.get(phase, 0)) for phase in PHASES)
        modules: tuple[ModuleBytes, ...] = ()
        if self._context is not None:
            inputs = [images, labels]
            saved = self._saved.by_module([*model.parameters(), *model.buffers(), *inputs])
            total = p + g + o + b + activations + other_bytes
            modules = measured_rows(model, [optimizer], self.device, saved, inputs, total)
            self._context = None
        return MemoryBreakdown(step, p, g, o, b, activations, other_bytes, peaks, method, modules=modules)
