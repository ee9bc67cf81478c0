"""The versions a bug report needs: the app, Python, the OS, torch and torchvision, CUDA and the GPUs torch
sees, cuDNN, the NVIDIA driver (through NVML), PySide6 and pyqtgraph.

Shared by the window's About box and "Copy system info" and by `gpu-train-monitor info`. Nothing here
imports Qt: PySide6's and pyqtgraph's versions come from their installed metadata, and the window adds
the Qt runtime's own version (`SystemInfo.with_facts`). Each fact is read on its own: one that fails says
why instead of hiding the others.
"""

from __future__ import annotations

import importlib.metadata
import platform
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..base.text import Message

DISTRIBUTION = "gpu-train-monitor"
APP_NAME = "GPU Training Monitor"
NOT_LOADED = Message("not loaded yet")  # torch still importing (the window loads it in the background)
NONE = Message("none")
GPUS = Message("GPUs")  # fact names that are words (the others are names of software)
NVIDIA_DRIVER = Message("NVIDIA driver")
# PySide6 is installed as the full distribution or as its Essentials subset; either names the version
PYSIDE_DISTRIBUTIONS = ("PySide6", "PySide6-Essentials", "PySide6_Essentials")


@dataclass(frozen=True)
class SystemInfo:
    """Named facts in the order they are shown, e.g. ("torch", "2.5.1"). Names and values that are words
    rather than names and versions are `Message`s: the About box shows them translated, the copied text
    (for a bug report) stays English."""

    facts: tuple[tuple[str, str], ...]

    def value(self, name: str) -> str:
        """The fact called `name`; KeyError when there is none."""
        for fact, value in self.facts:
            if fact == name:
                return value
        raise KeyError(name)

    def with_facts(self, extra: Iterable[tuple[str, str]]) -> SystemInfo:
        """These facts followed by `extra` (the window adds the Qt runtime's version)."""
        return SystemInfo(self.facts + tuple(extra))

    def text(self) -> str:
        """One 'name  value' line per fact, the values aligned: plain text to paste into a bug report."""
        width = max((len(name) for name, _ in self.facts), default=0)
        return "\n".join(f"{name:<{width}}  {value}" for name, value in self.facts)


def collect(torch_ready: bool = True) -> SystemInfo:
    """Read every fact now. `torch_ready=False` leaves torch alone (the window is still importing it in
    another thread: importing it here would block until that finishes) and says so."""
    facts: list[tuple[str, str]] = [
        (APP_NAME, _read(app_version)),
        ("Python", f"{platform.python_version()} ({platform.python_implementation()})"),
        (Message("OS"), _read(platform.platform)),
    ]
    if torch_ready:
        facts += [
            ("torch", _read(lambda: _torch().__version__)),
            ("torchvision", _read(_torchvision_version)),
            ("CUDA", _read(cuda_text)),
            (GPUS, _read(gpus_text)),
            ("cuDNN", _read(cudnn_text)),
        ]
    else:
        facts += [(name, NOT_LOADED) for name in ("torch", "torchvision", "CUDA", GPUS, "cuDNN")]
    facts += [
        (NVIDIA_DRIVER, _read(driver_text)),
        ("PySide6", _read(lambda: _installed_version(*PYSIDE_DISTRIBUTIONS))),
        ("pyqtgraph", _read(lambda: _installed_version("pyqtgraph"))),
    ]
    return SystemInfo(tuple(facts))


def app_version() -> str:
    """This app's version (`gpu_train_monitor.__version__`, the one place it lives; the wheel's metadata is read
    from it at build time, so an editable install that was not reinstalled still says the code's own)."""
    from .. import __version__

    return __version__


def app_summary() -> str:
    """The one-line description from the package metadata (empty when not installed)."""
    try:
        return importlib.metadata.metadata(DISTRIBUTION)["Summary"] or ""
    except (importlib.metadata.PackageNotFoundError, KeyError):
        return ""


def cuda_text() -> str:
    """The CUDA (or ROCm) version torch was built with, and whether it can use a GPU here."""
    torch = _torch()
    hip = getattr(torch.version, "hip", None)
    built = f"ROCm {hip}" if hip else torch.version.cuda
    if not built:
        return Message("none (a CPU-only build of torch)")
    if not torch.cuda.is_available():
        return Message("{version} (no GPU available)", version=built)
    count = torch.cuda.device_count()
    if count == 1:
        return Message("{version} (GPU available: 1 device)", version=built)
    return Message("{version} (GPU available: {count} devices)", version=built, count=count)


def gpus_text() -> str:
    """The names of the GPUs torch can use ('cuda:0 NVIDIA H200'), the Apple GPU, or 'none'."""
    torch = _torch()
    names = []
    if torch.cuda.is_available():
        names = [f"cuda:{index} {torch.cuda.get_device_name(index)}" for index in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        names.append("mps (Apple GPU)")
    return "; ".join(names) or NONE  # the devices' ids and names: the same in every language


def cudnn_text() -> str:
    """cuDNN's version as torch loads it ('9.1.0'), or 'none'."""
    torch = _torch()
    if not torch.backends.cudnn.is_available():
        return NONE
    version = torch.backends.cudnn.version()
    return NONE if version is None else cudnn_version_text(int(version))


def cudnn_version_text(version: int) -> str:
    """torch's cuDNN number as major.minor.patch: 90100 -> 9.1.0 (cuDNN 9 counts major*10000), 8902 -> 8.9.2
    (cuDNN 8 and earlier count major*1000)."""
    major, rest = divmod(version, 10_000) if version >= 90_000 else divmod(version, 1_000)
    return f"{major}.{rest // 100}.{rest % 100}"


def driver_text() -> str:
    """The NVIDIA driver's version and the newest CUDA it supports, through NVML; 'none' without one."""
    from . import nvml

    if not nvml.available():
        return Message("none (no NVIDIA driver found)")
    import pynvml

    driver = pynvml.nvmlSystemGetDriverVersion()
    driver = driver.decode() if isinstance(driver, bytes) else str(driver)  # bytes in older nvidia-ml-py
    try:
        cuda = int(pynvml.nvmlSystemGetCudaDriverVersion())  # e.g. 12040
    except Exception:  # noqa: BLE001 - drivers before CUDA 10 do not say: the version alone is enough
        return driver
    return Message("{driver} (supports CUDA {cuda})", driver=driver, cuda=f"{cuda // 1000}.{cuda % 1000 // 10}")


def _torch():
    import torch

    return torch


def _torchvision_version() -> str:
    import torchvision

    return str(torchvision.__version__)


def _installed_version(*distributions: str) -> str:
    for name in distributions:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return Message("not installed")


def _read(fact: Callable[[], object]) -> str:
    """The fact as text (a `Message` kept as it is), or what went wrong reading it: one broken library must not
    hide the rest."""
    try:
        value = fact()
        return value if isinstance(value, Message) else str(value)
    except Exception as exc:  # noqa: BLE001 - a report of the environment reports its failures too
        return Message("unknown ({error})", error=f"{type(exc).__name__}: {exc}")
