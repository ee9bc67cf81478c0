"""A remote device's reading (a `readings` stream line's data) as the memory plot takes it: a
`gpu_train_monitor.events.events.MemorySample`, timed on this machine's clock as it arrived (the other machine's
monotonic clock means nothing here). None for a line without a usable sample (an agent of another version)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from gpu_train_monitor.events.events import MemorySample

NAMES = tuple(f.name for f in fields(MemorySample))


def reading_sample(data: Mapping[str, Any], received_at: float) -> MemorySample | None:
    sample = data.get("sample")
    if not isinstance(sample, Mapping):
        return None
    values = {name: sample[name] for name in NAMES if name in sample}
    values["time_s"] = received_at
    values.setdefault("device", str(data.get("device") or ""))
    try:
        return MemorySample(**values)
    except TypeError:  # a field missing
        return None


def reading_gpu_status(data: Mapping[str, Any]) -> Any:
    """The reading's NVML part as a `gpu_train_monitor.device.nvml.GpuStatus` (None where that machine has no NVML
    reading for the device, or it cannot be read)."""
    from gpu_train_monitor.device.nvml import GpuProcess, GpuStatus

    nvml = data.get("nvml")
    if not isinstance(nvml, Mapping):
        return None
    try:
        processes = tuple(GpuProcess(**process) for process in nvml.get("processes") or ())
        values = {f.name: nvml[f.name] for f in fields(GpuStatus) if f.name in nvml and f.name != "processes"}
        return GpuStatus(**values, processes=processes)
    except (TypeError, ValueError):
        return None
