"""Live tensor bytes of a training step, counted per storage at the dispatcher: the peak and what held it.

Every tensor an operation returns is looked at once it exists; its storage is counted until Python and
autograd let go of it (a weak reference's callback), so a view or an in-place result costs nothing more.
The same count works on fake tensors (shapes without memory: a prediction) and on real ones (a
measurement), which is what makes the two comparable. What it cannot see: memory a kernel takes and
gives back inside one operation (cuDNN/cuBLAS workspaces), the allocator's rounding and cache, and the
CUDA context; `gpu_train_monitor.memory.predict` says how those are added.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


class LiveBytes(TorchDispatchMode):
    """`with tracker:` around a step counts the bytes of every live storage; `held(tensors)` first counts what
    already exists (parameters, optimizer state, the batch). `peak`, `at_peak` (storage key -> bytes live at
    the peak) and `phase_peaks` (one per `mark(phase)`, the highest count since the previous mark) follow."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0
        self.peak = 0
        self.at_peak: dict[int, int] = {}
        self.phase_peaks: list[tuple[str, int]] = []
        self._phase_peak = 0
        self._live: dict[int, int] = {}  # storage key -> bytes
        self._keys: weakref.WeakKeyDictionary[torch.UntypedStorage, int] = weakref.WeakKeyDictionary()
        self._refs: dict[int, weakref.ref[torch.UntypedStorage]] = {}
        self._next_key = itertools.count()
        self.on_new: Callable[[int], None] | None = None  # told each new storage's key (by-module attribution)
        self.on_mark: Callable[[str], None] | None = None  # told each phase mark

    def held(self, tensors: Iterable[torch.Tensor]) -> set[int]:
        """Counts `tensors` (already alive before the step) and gives their storage keys."""
        return {key for key in (self.track(t) for t in tensors) if key is not None}

    def key_of(self, tensor: torch.Tensor) -> int | None:
        """The key of the storage behind `tensor`, when the tracker has seen it."""
        storage = _storage(tensor)
        return None if storage is None else self._keys.get(storage)

    def keys_of(self, tensors: Iterable[torch.Tensor]) -> set[int]:
        return {key for key in (self.key_of(t) for t in tensors) if key is not None}

    def live_bytes(self, keys: Iterable[int]) -> int:
        """The bytes of those of `keys`' storages that are alive now."""
        return sum(self._live.get(key, 0) for key in keys)

    def track(self, tensor: torch.Tensor) -> int | None:
        storage = _storage(tensor)
        if storage is None:  # sparse, nested or other tensors without one plain storage: not counted
            return None
        size = storage.nbytes()
        key = self._keys.get(storage)
        if key is None:
            key = next(self._next_key)
            self._keys[storage] = key
            self._refs[key] = weakref.ref(storage, partial(self._freed, key))
            self._live[key] = size
            self.now += size
            if self.on_new is not None:
                self.on_new(key)
        elif self._live[key] != size:  # resized in place (resize_, an out= argument grown)
            self.now += size - self._live[key]
            self._live[key] = size
        if self.now > self.peak:
            self.peak = self.now
            self.at_peak = dict(self._live)
        self._phase_peak = max(self._phase_peak, self.now)
        return key

    def mark(self, phase: str) -> None:
        """A phase of the step ended (the training step's own marks: forward, backward, optimizer)."""
        self.phase_peaks.append((phase, self._phase_peak))
        self._phase_peak = self.now
        if self.on_mark is not None:
            self.on_mark(phase)

    def restart_peak(self) -> None:
        """The peak counts from now on (after `held`, before the step)."""
        self.peak = self._phase_peak = self.now
        self.at_peak = dict(self._live)
        self.phase_peaks = []

    def _freed(self, key: int, _ref: object) -> None:
        self.now -= self._live.pop(key, 0)
        self._refs.pop(key, None)

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        for value in tree_flatten(out)[0]:
            if isinstance(value, torch.Tensor):
                self.track(value)
        return out


def _storage(tensor: torch.Tensor) -> torch.UntypedStorage | None:
    try:
        return tensor.untyped_storage()
    except (RuntimeError, NotImplementedError, TypeError):
        return None
