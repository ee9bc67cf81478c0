"""The host memory this process may use: system memory, lowered by the tightest limit on the process
(`ulimit -v`, `ulimit -d`, a container's cgroup). The CPU device's capacity in the device list, the memory
probe's, the finder's and the dataset check's all read it here. Imports no torch.
"""

from __future__ import annotations

from dataclasses import dataclass

import psutil

LIMIT_KINDS = ("RLIMIT_AS", "RLIMIT_DATA", "cgroup")


@dataclass(frozen=True)
class ProcessLimit:
    """A limit on this process's memory below system memory. Each counts something else, none counts RSS:
    RLIMIT_AS (`ulimit -v`) the address space (VMS: mapped libraries and reservations too, so RSS stays well
    under it), RLIMIT_DATA (`ulimit -d`) the data segment and private mappings, a cgroup's memory.max the
    resident memory and page cache of every process in the control group."""

    kind: str  # one of LIMIT_KINDS
    limit_bytes: int
    used_bytes: int  # what the limit counts now

    @property
    def left_bytes(self) -> int:
        return max(self.limit_bytes - self.used_bytes, 0)


def host_free_bytes() -> int:
    """Available system memory, lowered by what this process's tightest limit leaves (`process_limit`)."""
    available = int(psutil.virtual_memory().available)
    limit = process_limit()
    return available if limit is None else min(available, limit.left_bytes)


def process_limit() -> ProcessLimit | None:
    """The limit that leaves this process the least memory, read now: its address space (RLIMIT_AS,
    `ulimit -v`, of which torch's libraries already take gigabytes), its data size (RLIMIT_DATA) or its
    cgroup's memory.max; None when none is below system memory."""
    total = int(psutil.virtual_memory().total)
    limits = [limit for limit in (*_rlimits(), _cgroup_limit()) if limit is not None and limit.limit_bytes < total]
    return min(limits, key=lambda limit: limit.left_bytes, default=None)


def _rlimits() -> list[ProcessLimit]:
    try:
        import resource

        info = psutil.Process().memory_info()
        found = []
        for kind, used in (("RLIMIT_AS", info.vms), ("RLIMIT_DATA", getattr(info, "data", info.vms))):
            soft, _ = resource.getrlimit(getattr(resource, kind))
            if soft != resource.RLIM_INFINITY:
                found.append(ProcessLimit(kind, int(soft), int(used)))
        return found
    except (ImportError, OSError, AttributeError, ValueError):
        return []


def _cgroup_limit() -> ProcessLimit | None:
    """cgroup v2's memory.max / memory.current, else v1's memory.limit_in_bytes / memory.usage_in_bytes, of
    the control group as this process sees it mounted (a container's own); None when unlimited or unreadable."""
    for folder, limit_name, used_name in (
        ("/sys/fs/cgroup", "memory.max", "memory.current"),
        ("/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes"),
    ):
        try:
            with open(f"{folder}/{limit_name}", encoding="ascii") as limit_file:
                limit = limit_file.read().strip()
            if limit == "max":
                return None
            with open(f"{folder}/{used_name}", encoding="ascii") as used_file:
                return ProcessLimit("cgroup", int(limit), int(used_file.read().strip()))
        except (OSError, ValueError):
            continue
    return None
