"""Counting host syncs on the CPU: every call that would make the host wait for a GPU, were the tensor on one.

A CPU run never waits, so CUDA's sync debug mode cannot be used here; instead the tensor methods that read a
tensor's values on the host (`item`, `tolist`, `numpy`, `bool()`, `float()`, `int()`) or copy it there (`cpu`,
`to` with a CPU device) are wrapped and each call is charged to the step the counter is at. A tensor that a
counted copy brought to the host is host data: reading it afterwards (`.cpu().tolist()`) is one transfer, not two,
as on a GPU. A copy with `non_blocking=True` (`to("cpu", non_blocking=True)`) is no sync: from a GPU it goes to
pinned memory and the host reads it once an event says it is done (gpu_train_monitor.engine.loss_transfer); its
result is host data too. Used by the watch's sync test and by tests/benchmarks/watch_loop.py.
"""

from __future__ import annotations

import contextlib
import functools
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

READS = ("item", "tolist", "numpy", "__bool__", "__float__", "__int__")  # the values, read on the host
COPIES = ("cpu", "to")  # a copy to the host (`to`: only with a CPU device)
_HOST_COPY = "_counted_host_copy"


@dataclass
class HostSyncs:
    """The counted calls, by step. `step` is set by the training loop before each step (1-based); calls made
    before the first step are charged to step 0."""

    step: int = 0
    calls: list[tuple[int, str]] = field(default_factory=list)

    def per_step(self) -> Counter[int]:
        return Counter(step for step, _ in self.calls)

    def names(self) -> list[str]:
        return sorted({name for _, name in self.calls})


def _to_cpu(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether `Tensor.to(*args, **kwargs)` targets the CPU (a device, its name, or a tensor on it)."""
    for target in (*args[:1], kwargs.get("device"), kwargs.get("other")):
        if isinstance(target, torch.Tensor):
            return target.device.type == "cpu"
        if isinstance(target, (str, torch.device)):
            try:
                return torch.device(target).type == "cpu"
            except RuntimeError:
                return False
    return False


def _wrapped(name: str, original: Callable[..., Any], syncs: HostSyncs) -> Callable[..., Any]:
    @functools.wraps(original)
    def counted(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        if getattr(self, _HOST_COPY, False) or (name == "to" and not _to_cpu(args, kwargs)):
            return original(self, *args, **kwargs)
        if not (name == "to" and kwargs.get("non_blocking")):
            syncs.calls.append((syncs.step, name))
        result = original(self, *args, **kwargs)
        if isinstance(result, torch.Tensor):
            if result is self:  # a CPU tensor's .cpu() is itself: mark an alias, not the device-side tensor
                result = result.view_as(result)
            setattr(result, _HOST_COPY, True)
        return result

    return counted


@contextlib.contextmanager
def counting_host_syncs() -> Iterator[HostSyncs]:
    """Count the host syncs made while the block runs (in any thread); the methods are restored after it."""
    syncs = HostSyncs()
    originals = {name: torch.Tensor.__dict__.get(name) for name in (*READS, *COPIES)}
    for name in (*READS, *COPIES):
        setattr(torch.Tensor, name, _wrapped(name, getattr(torch.Tensor, name), syncs))
    try:
        yield syncs
    finally:
        for name, original in originals.items():
            if original is None:
                delattr(torch.Tensor, name)  # it was inherited (from torch._C.TensorBase): inherit it again
            else:
                setattr(torch.Tensor, name, original)
