"""`compare --ready NAME`: a ready-made comparison picked by name, as the window's Compare menu offers it for this
machine's devices (the first CUDA GPU, else the Apple GPU, else none), instead of --vs lines. One that needs what
this machine lacks (expandable segments: a CUDA GPU) is named with why, in one line; an unknown name lists those
offered here."""

from __future__ import annotations

import os
from typing import Any

from ..base.errors import ConfigError
from ..base.text import Message
from ..config.run_config import RunConfig

FIELD = "ready"


def local_gpu() -> str | None:
    """Where this machine's ready-made comparisons run: the first CUDA GPU, else the Apple GPU, else None."""
    import torch

    from ..device.devices import mps_available

    if torch.cuda.is_available():
        return "cuda:0"
    return "mps" if mps_available() else None


def ready_overrides(name: str, base: RunConfig, remote: bool = False) -> list[dict[str, Any]]:
    """The override sets of the ready-made comparison `name` (case and spacing aside) on this machine; ConfigError
    (field 'ready') when it is not offered here, saying why."""
    if remote:
        raise ConfigError(FIELD, Message("picks from this machine's devices; with --remote, give the runs as --vs"))
    import torch

    from ..compare.plan import absent_comparisons, ready_comparisons
    from ..device.devices import resolve_device
    from ..device.fast_paths import compile_problem

    gpu = local_gpu()
    compile_available = compile_problem(resolve_device(gpu or "cpu")) is None
    processes = torch.cuda.device_count() if gpu is not None and gpu.startswith("cuda") else (os.cpu_count() or 1)
    wanted = " ".join(name.split()).lower()
    offered = ready_comparisons(base, gpu, compile_available, processes)
    for ready in offered:
        if str(ready.name).lower() == wanted:
            return [dict(overrides) for overrides in ready.overrides]
    for absent in absent_comparisons(gpu):
        if str(absent.name).lower() == wanted:
            why = Message("{name!r} {needs}: {reason}", name=str(absent.name), needs=absent.needs, reason=absent.reason)
            raise ConfigError(FIELD, why)
    raise ConfigError(
        FIELD,
        Message(
            "no ready-made comparison {name!r} here; this machine offers: {offered}",
            name=name,
            offered=", ".join(repr(str(r.name)) for r in offered),
        ),
    )
