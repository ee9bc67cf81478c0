"""Device-wide GPU readings through NVML (nvidia-ml-py), with one handle kept for the process.

NVML sees what PyTorch cannot: the CUDA context and other processes. Without an NVIDIA driver every
function here returns None quietly, so callers need no special cases.

On a MIG slice (an A100/H100/H200 partition) torch's cuda:N is the slice: memory and processes are read
through the slice's own NVML handle, while temperature, power and utilization exist only for the whole
GPU and are read through its parent handle (a MIG handle answers NOT_SUPPORTED for them).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_lock = threading.Lock()
_state: dict[str, object] = {"initialised": None}  # None: not tried; True/False: result
_handles: dict[int, object] = {}  # cuda index -> NVML handle of that device (a MIG slice's own), or None
_parents: dict[int, object] = {}  # cuda index -> handle of the whole GPU (the same handle unless MIG)
UUID_PREFIXES = ("GPU-", "MIG-")


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


def uuid_candidates(torch_uuid: str) -> list[str]:
    """The NVML UUIDs that torch's device UUID may stand for, most likely first.

    torch prints a device's UUID bare ("5fd4c0a2-...") in most versions, but may include NVML's
    prefix; a bare UUID is a whole GPU's ("GPU-...") or a MIG slice's ("MIG-..."): both are tried."""
    uuid = torch_uuid.strip()
    if uuid.upper().startswith(UUID_PREFIXES):
        return [uuid[:4].upper() + uuid[4:]]
    return [prefix + uuid for prefix in UUID_PREFIXES]


def handle(cuda_index: int) -> object | None:
    """The NVML handle for torch's cuda:N, matched by UUID (NVML orders by PCI bus, CUDA may not).
    For a MIG slice this is the slice's handle; `parent_handle` gives the whole GPU's."""
    if not _init():
        return None
    with _lock:
        if cuda_index in _handles:
            return _handles[cuda_index]
    found = parent = None
    try:
        import pynvml
        import torch

        uuid = str(torch.cuda.get_device_properties(cuda_index).uuid)
        for candidate in uuid_candidates(uuid):
            try:
                found = pynvml.nvmlDeviceGetHandleByUUID(candidate)
                break
            except Exception:  # NVML_ERROR_NOT_FOUND: not this kind of device, try the next prefix
                continue
        if found is not None:
            parent = _whole_gpu(pynvml, found)
    except Exception:  # no such cuda device, a broken driver: NVML readings are optional
        found = parent = None
    with _lock:
        _handles[cuda_index] = found
        _parents[cuda_index] = parent
    return found


def _whole_gpu(pynvml: object, device: object) -> object:
    """The GPU a MIG slice belongs to, or `device` itself (also when the driver predates MIG)."""
    try:
        is_mig = pynvml.nvmlDeviceIsMigDeviceHandle(device)  # type: ignore[attr-defined]
        if getattr(is_mig, "value", is_mig):  # pynvml returns a ctypes c_uint here
            return pynvml.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(device)  # type: ignore[attr-defined]
    except Exception:  # NOT_SUPPORTED / FUNCTION_NOT_FOUND on drivers without MIG: a whole GPU
        pass
    return device


def parent_handle(cuda_index: int) -> object | None:
    """The whole GPU's NVML handle for torch's cuda:N: `handle` itself unless cuda:N is a MIG slice."""
    if handle(cuda_index) is None:
        return None
    with _lock:
        return _parents.get(cuda_index)


def is_mig(cuda_index: int) -> bool:
    """Whether torch's cuda:N is a MIG slice, as NVML sees it (False without NVML)."""
    h = handle(cuda_index)
    whole = parent_handle(cuda_index)
    return h is not None and whole is not None and whole is not h


def memory(cuda_index: int) -> NvmlMemory | None:
    """Used and total memory of torch's cuda:N as NVML counts it (every process; a MIG slice's own
    memory on a slice), or None without NVML."""
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
    mig: bool = False  # a MIG slice: memory and processes are the slice's; load, temperature, power the GPU's


def status(cuda_index: int) -> GpuStatus | None:
    """Device-wide readings for torch's cuda:N, or None without NVML. Each field fails on its own."""
    h = handle(cuda_index)
    if h is None:
        return None
    whole = parent_handle(cuda_index) or h
    import pynvml

    def read(fn: Callable[..., Any], *args: object, device: object = h) -> Any:
        try:
            return fn(device, *args)
        except Exception:
            return None

    mem = read(pynvml.nvmlDeviceGetMemoryInfo)
    if mem is None:
        return None
    util = read(pynvml.nvmlDeviceGetUtilizationRates, device=whole)  # NOT_SUPPORTED in MIG mode: None
    temp = read(pynvml.nvmlDeviceGetTemperature, pynvml.NVML_TEMPERATURE_GPU, device=whole)
    power = read(pynvml.nvmlDeviceGetPowerUsage, device=whole)
    limit = read(pynvml.nvmlDeviceGetEnforcedPowerLimit, device=whole)
    procs = (read(pynvml.nvmlDeviceGetComputeRunningProcesses) or []) + (
        read(pynvml.nvmlDeviceGetGraphicsRunningProcesses) or []
    )
    seen: dict[int, GpuProcess] = {}
    for p in procs:
        used = getattr(p, "usedGpuMemory", None)
        seen[int(p.pid)] = GpuProcess(int(p.pid), _process_name(int(p.pid)), int(used) if used else None)
    return GpuStatus(
        int(mem.used),
        int(mem.total),
        getattr(util, "gpu", None),
        getattr(util, "memory", None),
        temp,
        power / 1000.0 if power is not None else None,
        limit / 1000.0 if limit is not None else None,
        tuple(seen.values()),
        mig=whole is not h,
    )


def _process_name(pid: int) -> str:
    try:
        import psutil

        return psutil.Process(pid).name()
    except Exception:  # another user's process, or one in another container
        return "?"


def available() -> bool:
    """Whether NVML could be initialised (an NVIDIA driver is present)."""
    return _init()
