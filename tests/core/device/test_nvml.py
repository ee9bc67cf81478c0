"""Device-wide readings through NVML: quietly absent without an NVIDIA driver, complete with one.

Without a GPU the driver is played by a stand-in for the few pynvml calls gpu_train_monitor.device.nvml makes; the real
driver is exercised in test_gpu_memory.py.
"""

from __future__ import annotations

import ctypes
import os
import sys
import types

import psutil
import pynvml
import pytest
import torch

import gpu_train_monitor.device.nvml as nvml
from gpu_train_monitor.device.nvml import GpuProcess, NvmlMemory

NO_SUCH_PID = 2**22 + 1  # above Linux's largest pid


@pytest.fixture
def fresh_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget whether NVML was initialised in this process, as at start-up."""
    monkeypatch.setattr(nvml, "_state", {"initialised": None})
    monkeypatch.setattr(nvml, "_handles", {})
    monkeypatch.setattr(nvml, "_parents", {})


def test_without_a_driver_every_reading_is_none_and_nothing_is_printed(
    fresh_nvml: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
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
    """The pynvml calls gpu_train_monitor.device.nvml makes, answering for one 80 GB GPU whose temperature sensor is
    unsupported."""

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
                types.SimpleNamespace(pid=NO_SUCH_PID, usedGpuMemory=None),
            ],  # a container hides its usage
            "nvmlDeviceGetGraphicsRunningProcesses": lambda h: [
                types.SimpleNamespace(pid=os.getpid(), usedGpuMemory=6 * 10**9)
            ],  # listed twice: shown once
        }
        for name, fn in calls.items():
            monkeypatch.setattr(pynvml, name, fn)
        # torch's cuda:0, found by UUID (NVML orders devices by PCI bus, CUDA may not)
        monkeypatch.setattr(
            torch.cuda, "get_device_properties", lambda index: types.SimpleNamespace(uuid=f"5a1b-{index}")
        )


def test_status_reads_memory_load_power_and_processes(fresh_nvml: None, monkeypatch: pytest.MonkeyPatch) -> None:
    driver = FakeDriver()
    driver.install(monkeypatch)
    status = nvml.status(0)
    assert status is not None
    assert (status.used_bytes, status.total_bytes) == (10 * 10**9, 80 * 10**9)
    assert (status.utilization_percent, status.memory_utilization_percent) == (55, 30)
    assert status.temperature_c is None  # one unsupported reading does not hide the others
    assert (status.power_w, status.power_limit_w) == (300.5, 700.0)
    assert status.processes == (
        GpuProcess(os.getpid(), psutil.Process().name(), 6 * 10**9),
        GpuProcess(NO_SUCH_PID, "?", None),
    )
    assert nvml.memory(0) == NvmlMemory(10 * 10**9, 80 * 10**9)
    assert nvml.available()
    assert driver.uuids == ["GPU-5a1b-0"]  # the handle is looked up once and kept


def test_a_device_nvml_cannot_read_gives_none(fresh_nvml: None, monkeypatch: pytest.MonkeyPatch) -> None:
    FakeDriver().install(monkeypatch)

    def lost(h: object) -> None:
        raise pynvml.NVMLError(pynvml.NVML_ERROR_GPU_IS_LOST)

    monkeypatch.setattr(pynvml, "nvmlDeviceGetMemoryInfo", lost)
    assert nvml.status(0) is None and nvml.memory(0) is None


# --- finding torch's device in NVML: whole GPUs and MIG slices ----------------------------------------

# UUIDs as the two libraries print them (nvidia-smi -L and torch.cuda.get_device_properties(i).uuid):
# NVML prefixes the kind of device; torch prints the bare UUID, or NVML's form in some versions.
GPU_UUID = "5fd4c0a2-8c1e-9b3d-2f47-3a1e6c8d9b02"
MIG_UUID = "8e7b2a14-3c5d-5f6e-9a0b-1c2d3e4f5a6b"


class MigDriver:
    """An H200 split into MIG slices, as pynvml shows it: a slice's handle answers memory and process
    queries; temperature, power and utilization answer only on the whole GPU's handle (NOT_SUPPORTED on
    a slice, and utilization NOT_SUPPORTED even there while MIG is on)."""

    def __init__(self, torch_uuid: str, mig_mode: bool = True, mig_functions: bool = True) -> None:
        self.torch_uuid = torch_uuid
        self.mig_mode = mig_mode  # False: MIG off, the whole GPU is one device and reports its load
        self.mig_functions = mig_functions  # False: a driver without the MIG functions
        self.looked_up: list[str] = []
        self.devices = {f"GPU-{GPU_UUID}": "gpu"} | ({f"MIG-{MIG_UUID}": "mig"} if mig_mode else {})

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def not_found() -> None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_FOUND)

        def by_uuid(uuid: str) -> str:
            self.looked_up.append(uuid)
            return self.devices[uuid] if uuid in self.devices else not_found()

        def on(*handles: str, answer: object) -> object:
            def query(h: str, *args: object) -> object:
                if h not in handles:
                    raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
                return answer

            return query

        def is_mig(h: str) -> object:
            if not self.mig_functions:
                raise pynvml.NVMLError(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
            return ctypes.c_uint(h == "mig")  # pynvml returns the ctypes value, not an int

        def parent(h: str) -> str:
            if h != "mig":
                raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
            return "gpu"

        memory = {
            "gpu": types.SimpleNamespace(used=40 * 10**9, total=141 * 10**9, free=0),
            "mig": types.SimpleNamespace(used=3 * 10**9, total=17 * 10**9, free=0),
        }
        calls = {
            "nvmlInit": lambda: None,
            "nvmlDeviceGetHandleByUUID": by_uuid,
            "nvmlDeviceIsMigDeviceHandle": is_mig,
            "nvmlDeviceGetDeviceHandleFromMigDeviceHandle": parent,
            "nvmlDeviceGetMemoryInfo": lambda h: memory[h],
            "nvmlDeviceGetUtilizationRates": on(
                *(() if self.mig_mode else ("gpu",)), answer=types.SimpleNamespace(gpu=70, memory=20)
            ),
            "nvmlDeviceGetTemperature": on("gpu", answer=51),
            "nvmlDeviceGetPowerUsage": on("gpu", answer=412_000),
            "nvmlDeviceGetEnforcedPowerLimit": on("gpu", answer=700_000),
            "nvmlDeviceGetComputeRunningProcesses": lambda h: [
                types.SimpleNamespace(pid=os.getpid(), usedGpuMemory=2 * 10**9 if h == "mig" else None)
            ],
            "nvmlDeviceGetGraphicsRunningProcesses": lambda h: [],
        }
        for name, fn in calls.items():
            monkeypatch.setattr(pynvml, name, fn)
        monkeypatch.setattr(
            torch.cuda, "get_device_properties", lambda index: types.SimpleNamespace(uuid=self.torch_uuid)
        )


@pytest.mark.parametrize("torch_uuid", [GPU_UUID, f"GPU-{GPU_UUID}"])
def test_a_whole_gpu_is_found_by_its_bare_or_prefixed_uuid(
    fresh_nvml: None, monkeypatch: pytest.MonkeyPatch, torch_uuid: str
) -> None:
    driver = MigDriver(torch_uuid, mig_mode=False)
    driver.install(monkeypatch)
    status = nvml.status(0)
    assert status is not None and not status.mig and not nvml.is_mig(0)
    assert (status.used_bytes, status.total_bytes) == (40 * 10**9, 141 * 10**9)
    assert (status.utilization_percent, status.temperature_c, status.power_w) == (70, 51, 412.0)
    assert nvml.handle(0) == nvml.parent_handle(0) == "gpu"
    assert driver.looked_up == [f"GPU-{GPU_UUID}"]  # the prefix is never doubled, and found at once


@pytest.mark.parametrize("torch_uuid", [f"MIG-{MIG_UUID}", MIG_UUID])
def test_a_mig_slice_reads_its_own_memory_and_the_whole_gpus_sensors(
    fresh_nvml: None, monkeypatch: pytest.MonkeyPatch, torch_uuid: str
) -> None:
    driver = MigDriver(torch_uuid)
    driver.install(monkeypatch)
    status = nvml.status(0)
    assert status is not None, "a MIG slice must not read as 'NVML unavailable'"
    assert status.mig and nvml.is_mig(0)
    assert (nvml.handle(0), nvml.parent_handle(0)) == ("mig", "gpu")
    assert (status.used_bytes, status.total_bytes) == (3 * 10**9, 17 * 10**9)  # the slice, as torch sees it
    assert nvml.memory(0) == NvmlMemory(3 * 10**9, 17 * 10**9)
    assert (status.temperature_c, status.power_w, status.power_limit_w) == (51, 412.0, 700.0)  # the GPU's
    assert status.utilization_percent is None  # NVML has no per-device load while MIG is on
    assert status.processes == (GpuProcess(os.getpid(), psutil.Process().name(), 2 * 10**9),)
    expected = [f"MIG-{MIG_UUID}"] if torch_uuid.startswith("MIG-") else [f"GPU-{MIG_UUID}", f"MIG-{MIG_UUID}"]
    assert driver.looked_up == expected  # and looked up once: the handles are kept


def test_a_driver_without_mig_functions_treats_the_device_as_a_whole_gpu(
    fresh_nvml: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver = MigDriver(GPU_UUID, mig_mode=False, mig_functions=False)
    driver.install(monkeypatch)
    status = nvml.status(0)
    assert status is not None and not status.mig
    assert nvml.parent_handle(0) == "gpu" and status.temperature_c == 51


@pytest.mark.parametrize(
    "torch_uuid", ["0badc0de-0000-0000-0000-000000000000", "MIG-0badc0de-0000", "GPU-0badc0de-0000", ""]
)
def test_a_uuid_nvml_does_not_know_gives_none_quietly(
    fresh_nvml: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], torch_uuid: str
) -> None:
    driver = MigDriver(torch_uuid)
    driver.install(monkeypatch)
    assert nvml.handle(0) is None and nvml.parent_handle(0) is None and not nvml.is_mig(0)
    assert nvml.status(0) is None and nvml.memory(0) is None
    tries = len(driver.looked_up)
    assert 1 <= tries <= 2
    nvml.status(0)
    assert len(driver.looked_up) == tries  # the failed lookup is remembered, not repeated on every poll
    assert capsys.readouterr() == ("", "")


def test_a_cuda_index_torch_does_not_have_gives_none(fresh_nvml: None, monkeypatch: pytest.MonkeyPatch) -> None:
    MigDriver(GPU_UUID).install(monkeypatch)

    def no_such_device(index: int) -> None:
        raise AssertionError("Invalid device id")  # what torch raises for cuda:N past the last device

    monkeypatch.setattr(torch.cuda, "get_device_properties", no_such_device)
    assert nvml.handle(3) is None and nvml.status(3) is None


@pytest.mark.parametrize(
    "torch_uuid, expected",
    [
        (GPU_UUID, [f"GPU-{GPU_UUID}", f"MIG-{GPU_UUID}"]),
        (f"GPU-{GPU_UUID}", [f"GPU-{GPU_UUID}"]),
        (f"MIG-{MIG_UUID}", [f"MIG-{MIG_UUID}"]),
        (f" mig-{MIG_UUID}\n", [f"MIG-{MIG_UUID}"]),
    ],
)
def test_uuid_candidates(torch_uuid: str, expected: list[str]) -> None:
    assert nvml.uuid_candidates(torch_uuid) == expected
