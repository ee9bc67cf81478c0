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
