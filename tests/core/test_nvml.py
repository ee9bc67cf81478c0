"""Device-wide readings through NVML: quietly absent without an NVIDIA driver, complete with one.

Without a GPU the driver is played by a stand-in for the few pynvml calls core.nvml makes; the real
driver is exercised in test_gpu_memory.py.
"""

from __future__ import annotations

import os
import sys
import types

import psutil
import pynvml
import pytest
import torch

import core.nvml as nvml
from core.nvml import GpuProcess, NvmlMemory

NO_SUCH_PID = 2**22 + 1  # above Linux's largest pid


@pytest.fixture
def fresh_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget whether NVML was initialised in this process, as at start-up."""
    monkeypatch.setattr(nvml, "_state", {"initialised": None})
    monkeypatch.setattr(nvml, "_handles", {})


def test_without_a_driver_every_reading_is_none_and_nothing_is_printed(
        fresh_nvml: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    attempts: list[int] = []

    def no_driver() -> None:
        attempts.append(1)
        raise pynvml.NVMLError(pynvml.NVML_ERROR_DRIVER_NOT_LOADED)

    monkeypatch.setattr(pynvml, "nvmlInit", no_driver)
    assert nvml.status(0) is None and nvml.memory(0) is None and nvml.handle(1) is None
    assert not nvml.available()
    assert attempts == [1]  # tried once, not on every poll
    assert capsys.readouterr() == ("", "")


def test_without_the_library_every_reading_is_none(fresh_nvml: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` raises ImportError
    assert nvml.status(0) is None and nvml.memory(0) is None and not nvml.available()


class FakeDriver:
    """The pynvml calls core.nvml makes, answering for one 80 GB GPU whose temperature sensor is unsupported."""

    def __init__(self) -> None:
        self.uuids: list[str] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def unsupported(*args: object) -> None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)

        def by_uuid(uuid: str) -> str:
            self.uuids.append(uuid)
            return "gpu-handle"

        calls = {
            "nvmlInit": lambda: None,
            "nvmlDeviceGetHandleByUUID": by_uuid,
            "nvmlDeviceGetMemoryInfo": lambda h: types.SimpleNamespace(used=10 * 10**9, total=80 * 10**9, free=0),
            "nvmlDeviceGetUtilizationRates": lambda h: types.SimpleNamespace(gpu=55, memory=30),
            "nvmlDeviceGetTemperature": unsupported,
            "nvmlDeviceGetPowerUsage": lambda h: 300_500,  # milliwatts
            "nvmlDeviceGetEnforcedPowerLimit": lambda h: 700_000,
            "nvmlDeviceGetComputeRunningProcesses": lambda h: [
                types.SimpleNamespace(pid=os.getpid(), usedGpuMemory=6 * 10**9),
                types.SimpleNamespace(pid=NO_SUCH_PID, usedGpuMemory=None)],  # a container hides its usage
            "nvmlDeviceGetGraphicsRunningProcesses": lambda h: [
                types.SimpleNamespace(pid=os.getpid(), usedGpuMemory=6 * 10**9)],  # listed twice: shown once
        }
        for name, fn in calls.items():
            monkeypatch.setattr(pynvml, name, fn)
        # torch's cuda:0, found by UUID (NVML orders devices by PCI bus, CUDA may not)
        monkeypatch.setattr(torch.cuda, "get_device_properties",
                            lambda index: types.SimpleNamespace(uuid=f"5a1b-{index}"))


def test_status_reads_memory_load_power_and_processes(fresh_nvml: None, monkeypatch: pytest.MonkeyPatch) -> None:
    driver = FakeDriver()
    driver.install(monkeypatch)
    status = nvml.status(0)
    assert status is not None
    assert (status.used_bytes, status.total_bytes) == (10 * 10**9, 80 * 10**9)
    assert (status.utilization_percent, status.memory_utilization_percent) == (55, 30)
    assert status.temperature_c is None  # one unsupported reading does not hide the others
    assert (status.power_w, status.power_limit_w) == (300.5, 700.0)
    assert status.processes == (GpuProcess(os.getpid(), psutil.Process().name(), 6 * 10**9),
                                GpuProcess(NO_SUCH_PID, "?", None))
    assert nvml.memory(0) == NvmlMemory(10 * 10**9, 80 * 10**9)
    assert nvml.available()
    assert driver.uuids == ["GPU-5a1b-0"]  # the handle is looked up once and kept


def test_a_device_nvml_cannot_read_gives_none(fresh_nvml: None, monkeypatch: pytest.MonkeyPatch) -> None:
    FakeDriver().install(monkeypatch)

    def lost(h: object) -> None:
        raise pynvml.NVMLError(pynvml.NVML_ERROR_GPU_IS_LOST)

    monkeypatch.setattr(pynvml, "nvmlDeviceGetMemoryInfo", lost)
    assert nvml.status(0) is None and nvml.memory(0) is None
