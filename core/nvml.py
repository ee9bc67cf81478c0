"""Device-wide GPU readings through NVML (nvidia-ml-py), with one handle kept for the process.

NVML sees what PyTorch cannot: the CUDA context and other processes. Without an NVIDIA driver every
function here returns None quietly, so callers need no special cases.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

_lock = threading.Lock()
_state: dict[str, object] = {"initialised": None}  # None: not tried; True/False: result
_handles: dict[int, object] = {}


@dataclass(frozen=True)
class NvmlMemory:
    used_bytes: int
    total_bytes: int


def _init() -> bool:
    with _lock:
        if _state["initialised"] is None:
            try:
                import pynvml

                pynvml.nvmlInit()
                _state["initialised"] = True
            except Exception:  # no driver, no library: NVML is optional
                _state["initialised"] = False
        return bool(_state["initialised"])


def handle(cuda_index: int) -> object | None:
    """The NVML handle for torch's cuda:N, matched by UUID (NVML orders by PCI bus, CUDA may not)."""
    if not _init():
        return None
    with _lock:
        if cuda_index in _handles:
            return _handles[cuda_index]
    try:
        import pynvml
        import torch

        uuid = str(torch.cuda.get_device_properties(cuda_index).uuid)
        found = pynvml.nvmlDeviceGetHandleByUUID(uuid if uuid.startswith("GPU-") else f"GPU-{uuid}")
    except Exception:
        found = None
    with _lock:
        _handles[cuda_index] = found
    return found


def memory(cuda_index: int) -> NvmlMemory | None:
    """Device-wide used and total memory, or None without NVML."""
    h = handle(cuda_index)
    if h is None:
        return None
    try:
        import pynvml

        info = pynvml.nvmlDeviceGetMemoryInfo(h)
        return NvmlMemory(int(info.used), int(info.total))
    except Exception:
        return None


@dataclass(frozen=True)
class GpuProcess:
    pid: int
    name: str
    used_bytes: int | None  # None where the driver does not say (some containers)


@dataclass(frozen=True)
class GpuStatus:
    """What NVML says about the whole device: memory of every process, load, temperature, power."""

    used_bytes: int
    total_bytes: int
    utilization_percent: int | None
    memory_utilization_percent: int | None
    temperature_c: int | None
    power_w: float | None
    power_limit_w: float | None
    processes: tuple[GpuProcess, ...]


def status(cuda_index: int) -> GpuStatus | None:
    """Device-wide readings for torch's cuda:N, or None without NVML. Each field fails on its own."""
    h = handle(cuda_index)
    if h is None:
        return None
    import pynvml

    def read(fn, *args):
        try:
            return fn(h, *args)
        except Exception:
            return None

    mem = read(pynvml.nvmlDeviceGetMemoryInfo)
    if mem is None:
        return None
    util = read(pynvml.nvmlDeviceGetUtilizationRates)
    temp = read(pynvml.nvmlDeviceGetTemperature, pynvml.NVML_TEMPERATURE_GPU)
    power = read(pynvml.nvmlDeviceGetPowerUsage)
    limit = read(pynvml.nvmlDeviceGetEnforcedPowerLimit)
    procs = (read(pynvml.nvmlDeviceGetComputeRunningProcesses) or []) + (
        read(pynvml.nvmlDeviceGetGraphicsRunningProcesses) or [])
    seen: dict[int, GpuProcess] = {}
    for p in procs:
        used = getattr(p, "usedGpuMemory", None)
        seen[int(p.pid)] = GpuProcess(int(p.pid), _process_name(int(p.pid)), int(used) if used else None)
    return GpuStatus(int(mem.used), int(mem.total), getattr(util, "gpu", None), getattr(util, "memory", None),
                     temp, power / 1000.0 if power is not None else None,
                     limit / 1000.0 if limit is not None else None, tuple(seen.values()))


def _process_name(pid: int) -> str:
    try:
        import psutil

        return psutil.Process(pid).name()
    except Exception:  # another user's process, or one in another container
        return "?"


def available() -> bool:
    """Whether NVML could be initialised (an NVIDIA driver is present)."""
    return _init()
