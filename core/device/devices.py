"""Which devices exist, what they are called, turning a user's device string into a torch.device, and
whether this machine has enough of them for a data-parallel run's processes."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass

import psutil
import torch

from ..base.errors import ConfigError
from ..base.text import Message
from ..config.run_config import RunConfig
from .host_memory import host_free_bytes, process_limit


@dataclass(frozen=True)
class DeviceInfo:
    """One device a run can use. Sizes in bytes; free/used are None where they cannot be read cheaply."""

    spec: str  # what to pass as --device: "cpu", "cuda:0", "mps"
    kind: str  # "cpu", "cuda" or "mps"
    name: str  # the CPU's and the Apple GPU's are `Message`s (words around the name); a CUDA GPU's is its own
    capacity_bytes: int
    free_bytes: int | None = None
    used_bytes: int | None = None


def device_name(device: torch.device) -> str:
    """The name a run records for its device (the run store's `device_name`): a CUDA GPU's own, the Apple GPU, or
    the processor's."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return "Apple GPU (MPS)" if device.type == "mps" else cpu_name()


def cpu_name() -> str:
    """The processor's marketing name where the OS tells it, else the architecture."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def mps_available() -> bool:
    return bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())


def list_devices(query_free: bool = True) -> list[DeviceInfo]:
    """cpu, then every CUDA device, then mps when present. `query_free` reads free memory (starts CUDA)."""
    vm, limit = psutil.virtual_memory(), process_limit()
    cpu = Message("{cpu} ({threads} threads)", cpu=cpu_name(), threads=psutil.cpu_count())
    if limit is None:
        devices = [DeviceInfo("cpu", "cpu", cpu, vm.total, vm.available, vm.total - vm.available)]
    else:  # under ulimit -v or a cgroup: the process's limit is its capacity, as the memory plot's and the finder's
        free = host_free_bytes()
        devices = [DeviceInfo("cpu", "cpu", cpu, limit.limit_bytes, free, max(limit.limit_bytes - free, 0))]
    if torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            free = used = None
            if query_free:
                free, total = torch.cuda.mem_get_info(index)
                used = total - free
            devices.append(DeviceInfo(f"cuda:{index}", "cuda", props.name, props.total_memory, free, used))
    if mps_available():
        capacity = int(torch.mps.recommended_max_memory())
        used = int(torch.mps.driver_allocated_memory())
        devices.append(DeviceInfo("mps", "mps", Message("Apple GPU (MPS)"), capacity, max(capacity - used, 0), used))
    return devices


def best_device_spec() -> str:
    """The fastest device present: the first CUDA GPU, else Apple's GPU, else the CPU."""
    if torch.cuda.is_available():
        return "cuda:0"
    if mps_available():
        return "mps"
    return "cpu"


def device_kind(spec: str) -> str:
    """'cpu', 'cuda' or 'mps' for a --device value (what a preset's CPU settings depend on); 'auto': the best."""
    spec = spec.strip().lower()
    if spec == "auto":
        spec = best_device_spec()
    return spec.split(":", 1)[0]


def resolve_device(spec: str) -> torch.device:
    """Turn "auto", "cpu", "cuda", "cuda:N" or "mps" into a device that exists, or raise ConfigError.

    GPUs come back indexed (cuda:N, mps:0), the way torch names the device of a tensor placed there."""
    spec = spec.strip().lower()
    if spec == "auto":
        spec = best_device_spec()
    try:
        device = torch.device(spec)
    except RuntimeError:
        raise ConfigError(
            "device",
            Message(
                "{spec} is not a device name; use auto, cpu, cuda:N or mps (available: {available})",
                spec=repr(spec),
                available=_available(),
            ),
        ) from None
    if device.type == "cpu":
        if device.index not in (None, 0):  # torch accepts cpu:1 and runs on the same CPU: say so instead
            raise ConfigError("device", Message("{spec} does not exist: the CPU is one device (use cpu)", spec=spec))
        return torch.device("cpu")
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = 0 if device.index is None else device.index
        if index >= count:
            raise ConfigError(
                "device", Message("{spec} is not available (available: {available})", spec=spec, available=_available())
            )
        return torch.device("cuda", index)
    if device.type == "mps":
        if not mps_available():
            raise ConfigError(
                "device", Message("mps is not available (available: {available})", available=_available())
            )
        if device.index not in (None, 0):
            raise ConfigError("device", Message("{spec} does not exist: a Mac has one GPU (use mps)", spec=spec))
        # indexed, as torch reports tensors ("mps:0"): a generator made for plain "mps" is refused by some
        # ops on tensors placed there (pytorch#110820)
        return torch.device("mps", 0)
    raise ConfigError(
        "device",
        Message(
            "{spec} is not supported; use auto, cpu, cuda:N or mps (available: {available})",
            spec=repr(spec),
            available=_available(),
        ),
    )


def _available() -> str:
    """The device ids present, joined: identifiers, the same in every language."""
    return ", ".join(d.spec for d in list_devices(query_free=False))


def check_process_count(config: RunConfig) -> None:
    """ConfigError when this machine has fewer devices than `nproc` asks for: GPUs for a CUDA run, CPU cores
    for CPU processes (each is a full training process; more than the cores only slows them all)."""
    n = config.nproc
    cuda = config.device == "cuda" or (config.device == "auto" and torch.cuda.is_available())
    if cuda:
        count = torch.cuda.device_count()
        if count == 0:
            raise ConfigError(
                "device", Message("cuda was asked for, but this machine has no CUDA GPU; use --device cpu")
            )
        if n > count:
            raise ConfigError(
                "nproc",
                Message(
                    "{n} processes need {n} GPUs, but this machine has {count}; use --nproc "
                    "{count} or fewer (one process per GPU)",
                    n=n,
                    count=count,
                ),
            )
        return
    cores = os.cpu_count() or 1
    if n > cores:
        raise ConfigError(
            "nproc",
            Message(
                "{n} CPU processes on {cores} CPU cores: each process trains on its own "
                "core at least; use --nproc {cores} or fewer (or --device cuda on a GPU "
                "machine)",
                n=n,
                cores=cores,
            ),
        )


def check_amp(device: torch.device, mode: str) -> None:
    """Raise ConfigError when `mode` mixed precision cannot run on `device`."""
    if mode == "off":
        return
    if device.type == "cpu" and mode == "fp16":
        raise ConfigError("amp", Message("fp16 needs a CUDA or MPS device; on the CPU use bf16 or off"))
    if device.type == "cuda" and mode == "bf16" and not torch.cuda.is_bf16_supported():
        raise ConfigError(
            "amp", Message("{gpu} does not support bf16; use fp16 or off", gpu=torch.cuda.get_device_name(device))
        )
    if device.type == "mps" and mode == "bf16" and not _mps_bf16():
        raise ConfigError("amp", Message("this macOS/MPS build does not support bf16; use fp16 or off"))


def _mps_bf16() -> bool:
    try:
        torch.zeros(1, dtype=torch.bfloat16, device="mps")
        return True
    except (RuntimeError, TypeError):
        return False


def amp_dtype(mode: str) -> torch.dtype | None:
    return {"fp16": torch.float16, "bf16": torch.bfloat16}.get(mode)
