"""Memory readings for any device, and clearing the caching allocator.

`MemoryProbe.sample()` reads host-side allocator counters only (no device sync), so it is cheap and
safe from any thread: the training loop, the GUI's idle timer and the CLI all use the same probe.
On the CPU there is no caching allocator: allocated is the process's resident memory (RSS) and
capacity is system memory, or the process's own limit where one is lower (`gpu_train_monitor.device.host_memory`).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import psutil

from ..device import nvml
from ..device.host_memory import host_free_bytes, process_limit
from ..events.events import MemorySample

if TYPE_CHECKING:
    import torch

# torch is imported inside the functions that need it: the window may import this module before torch has
# loaded in the background, and must not wait for it.


class MemoryProbe:
    """Reads memory for one device. Thread-safe; tracks peaks itself where the backend has none."""

    _MEM_GET_INFO_PERIOD_S = 1.0  # cudaMemGetInfo is a driver call: rate-limit the NVML fallback

    def __init__(self, device: torch.device | str) -> None:
        import torch

        self.device = torch.device(device)
        self._process = psutil.Process()
        self._lock = threading.Lock()
        self._peak_rss = 0
        self._peak_mps = (0, 0)
        self._peak_floor = (0, 0)  # CUDA peaks from before a phase reset (see reset_phase_peak)
        self._mem_info_cache: tuple[float, int | None] = (-1e9, None)
        self._host_used_cache: tuple[float, int] = (-1e9, 0)
        self._capacity_limit: str | None = None  # set by _read_capacity on a CPU under a process limit
        self._capacity = self._read_capacity()

    def _read_capacity(self) -> int:
        import torch

        if self.device.type == "cuda":
            return int(torch.cuda.get_device_properties(self.device).total_memory)
        if self.device.type == "mps":
            return int(torch.mps.recommended_max_memory())
        limit = process_limit()
        self._capacity_limit = limit.kind if limit is not None else None
        return int(limit.limit_bytes) if limit is not None else int(psutil.virtual_memory().total)

    def reset_peak(self) -> None:
        """Start peak tracking afresh (at the start of a run, after a cache clear if wanted)."""
        import torch

        with self._lock:
            self._peak_rss = 0
            self._peak_mps = (0, 0)
            self._peak_floor = (0, 0)
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)

    def reset_phase_peak(self) -> int:
        """CUDA: return the allocated peak since the previous call and restart the counter, keeping the
        run's peak for `sample()`. Lets one step be measured phase by phase (host counters only)."""
        import torch

        peak = int(torch.cuda.max_memory_allocated(self.device))
        peak_reserved = int(torch.cuda.max_memory_reserved(self.device))
        with self._lock:
            self._peak_floor = (max(self._peak_floor[0], peak), max(self._peak_floor[1], peak_reserved))
        torch.cuda.reset_peak_memory_stats(self.device)
        return peak

    def rss_bytes(self) -> int:
        """This process's resident memory now (also raises the tracked peak)."""
        rss = int(self._process.memory_info().rss)
        with self._lock:
            self._peak_rss = max(self._peak_rss, rss)
        return rss

    @property
    def peak_rss_bytes(self) -> int:
        """The largest process RSS seen by `sample()` since the last `reset_peak()`."""
        with self._lock:
            return self._peak_rss

    def sample(self) -> MemorySample:
        import torch

        rss = int(self._process.memory_info().rss)
        now = time.monotonic()
        kind = self.device.type
        with self._lock:
            self._peak_rss = max(self._peak_rss, rss)
            retries: int | None = None  # only CUDA's caching allocator counts retries and cudaMalloc failures
            ooms: int | None = None
            if kind == "cuda":
                # one read of the allocator's host counters (no sync): memory_allocated() and its siblings each read
                # all of them again
                stats = torch.cuda.memory_stats(self.device)
                allocated = int(stats.get("allocated_bytes.all.current", 0))
                reserved = int(stats.get("reserved_bytes.all.current", 0))
                peak_alloc = max(int(stats.get("allocated_bytes.all.peak", 0)), self._peak_floor[0])
                peak_res = max(int(stats.get("reserved_bytes.all.peak", 0)), self._peak_floor[1])
                retries, ooms = int(stats.get("num_alloc_retries", 0)), int(stats.get("num_ooms", 0))
                used = self._cuda_device_used(now)
                has_allocator = True
            elif kind == "mps":
                allocated = int(torch.mps.current_allocated_memory())
                reserved = int(torch.mps.driver_allocated_memory())
                self._peak_mps = (max(self._peak_mps[0], allocated), max(self._peak_mps[1], reserved))
                peak_alloc, peak_res = self._peak_mps
                used, has_allocator = reserved, True
            else:
                allocated, reserved = rss, 0
                peak_alloc, peak_res = self._peak_rss, 0
                used, has_allocator = self._host_used(now), False
            return MemorySample(
                now,
                str(self.device),
                allocated,
                reserved,
                peak_alloc,
                peak_res,
                self._capacity,
                used,
                rss,
                has_allocator,
                self._capacity_limit,
                retries,
                ooms,
            )

    def _host_used(self, now: float) -> int:
        """System memory in use, read at most once a second: psutil parses /proc/meminfo each time, which was a
        third of a CPU report's cost (a watched loop reports ten times a second)."""
        last, value = self._host_used_cache
        if now - last >= self._MEM_GET_INFO_PERIOD_S:
            vm = psutil.virtual_memory()
            value = int(vm.total - vm.available)
            self._host_used_cache = (now, value)
        return value

    def _cuda_device_used(self, now: float) -> int | None:
        import torch

        index = self.device.index or 0
        info = nvml.memory(index)
        if info is not None:
            return info.used_bytes
        last, value = self._mem_info_cache
        if now - last >= self._MEM_GET_INFO_PERIOD_S:
            free, total = torch.cuda.mem_get_info(index)
            value = int(total - free)
            self._mem_info_cache = (now, value)
        return value

    def free_bytes(self) -> int:
        """Memory a new allocation of this process could take now: the device's free memory plus the
        allocator's unused cache, capped by a per-process limit (`set_per_process_memory_fraction`);
        on the CPU, available system memory capped by this process's limits."""
        import torch

        if self.device.type == "cuda":
            return cuda_free_bytes(self.device)
        if self.device.type == "mps":
            return max(self._capacity - int(torch.mps.driver_allocated_memory()), 0)
        return host_free_bytes()


def cuda_free_bytes(device: torch.device) -> int:
    """Free memory on a CUDA device as this process may use it. cudaMemGetInfo reports the whole GPU;
    a memory fraction set for this process lowers what its allocator will hand out."""
    import torch

    free, total = torch.cuda.mem_get_info(device)
    allocated = int(torch.cuda.memory_allocated(device))
    usable = int(free) + int(torch.cuda.memory_reserved(device)) - allocated
    fraction = float(torch.cuda.get_per_process_memory_fraction(device))
    if fraction < 1.0:
        usable = min(usable, int(total * fraction) - allocated)
    return max(usable, 0)


def clear_cache(device: torch.device | str) -> int:
    """Return cached, unused blocks to the driver. Returns the bytes given back (0 on the CPU)."""
    import torch

    device = torch.device(device)
    if device.type == "cuda":
        before = torch.cuda.memory_reserved(device)
        with torch.cuda.device(device):
            torch.cuda.empty_cache()
        return max(int(before - torch.cuda.memory_reserved(device)), 0)
    if device.type == "mps":
        before = torch.mps.driver_allocated_memory()
        torch.mps.empty_cache()
        return max(int(before - torch.mps.driver_allocated_memory()), 0)
    return 0


def has_cache(device: torch.device | str) -> bool:
    """Whether clearing a cache can free anything on this device (CUDA and MPS have caching allocators)."""
    import torch

    return torch.device(device).type in ("cuda", "mps")
