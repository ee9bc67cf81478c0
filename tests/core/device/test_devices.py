"""Which devices exist, and turning what the user typed into one that does (or a message saying what exists)."""

from __future__ import annotations

import psutil
import pytest
import torch

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.device.devices import (
    amp_dtype,
    best_device_spec,
    check_amp,
    check_process_count,
    list_devices,
    mps_available,
    resolve_device,
)


def test_cpu_is_listed_first_with_its_name_and_system_memory() -> None:
    devices = list_devices()
    cpu = devices[0]
    assert (cpu.spec, cpu.kind) == ("cpu", "cpu")
    assert cpu.name and "threads" in cpu.name
    assert cpu.capacity_bytes == psutil.virtual_memory().total
    assert cpu.free_bytes is not None and 0 < cpu.free_bytes <= cpu.capacity_bytes
    assert cpu.used_bytes == cpu.capacity_bytes - cpu.free_bytes


def test_every_cuda_device_and_mps_are_listed_when_present() -> None:
    specs = [d.spec for d in list_devices(query_free=False)]
    expected = ["cpu"] + [f"cuda:{i}" for i in range(torch.cuda.device_count() if torch.cuda.is_available() else 0)]
    if mps_available():
        expected.append("mps")
    assert specs == expected
    assert all(d.capacity_bytes > 0 for d in list_devices(query_free=False))


def test_auto_picks_the_fastest_device_present() -> None:
    expected = "cuda:0" if torch.cuda.is_available() else ("mps" if mps_available() else "cpu")
    assert best_device_spec() == expected
    assert resolve_device("auto") == torch.device("mps:0" if expected == "mps" else expected)


@pytest.mark.parametrize("spec", ["cpu:1", "CPU:3"])
def test_an_indexed_cpu_is_refused_because_the_cpu_is_one_device(spec: str) -> None:
    # torch accepts cpu:1 and would train on the one CPU anyway: the user meant something else
    with pytest.raises(ConfigError) as info:
        resolve_device(spec)
    assert info.value.field == "device"
    assert str(info.value) == f"device: {spec.lower()} does not exist: the CPU is one device (use cpu)"


def test_cpu_0_is_the_cpu() -> None:
    assert resolve_device("cpu:0") == torch.device("cpu")


@pytest.mark.parametrize("spec", ["mps", "MPS", "mps:0", "auto"])
def test_mps_resolves_to_an_indexed_device_so_tensors_and_generators_agree(
    monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    # a tensor on Apple's GPU reports "mps:0"; a Generator made for a plain "mps" is refused by some ops
    # on it (pytorch#110820). No Mac here: the availability check is replaced.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("gpu_train_monitor.device.devices.mps_available", lambda: True)
    device = resolve_device(spec)
    assert device == torch.device("mps", 0)
    assert str(device) == "mps:0" and device.index == 0


def test_a_second_apple_gpu_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gpu_train_monitor.device.devices.mps_available", lambda: True)
    with pytest.raises(ConfigError, match=r"device: mps:1 does not exist: a Mac has one GPU \(use mps\)"):
        resolve_device("mps:1")


@pytest.mark.parametrize("spec", ["cpu", " CPU ", "Cpu"])
def test_cpu_resolves_however_it_is_typed(spec: str) -> None:
    assert resolve_device(spec) == torch.device("cpu")


def test_a_gpu_that_does_not_exist_names_what_does() -> None:
    missing = (torch.cuda.device_count() if torch.cuda.is_available() else 0) + 7
    available = ", ".join(d.spec for d in list_devices(query_free=False))
    with pytest.raises(ConfigError) as info:
        resolve_device(f"cuda:{missing}")
    assert info.value.field == "device"
    assert f"cuda:{missing} is not available" in str(info.value)
    assert f"(available: {available})" in str(info.value)


def test_cuda_without_an_index_needs_a_gpu() -> None:
    if torch.cuda.is_available():
        assert resolve_device("cuda") == torch.device("cuda", 0)
    else:
        with pytest.raises(ConfigError, match=r"device: cuda is not available \(available: cpu"):
            resolve_device("cuda")


def test_mps_resolves_only_where_apple_gpus_exist() -> None:
    if mps_available():
        assert resolve_device("mps") == torch.device("mps", 0)
    else:
        with pytest.raises(ConfigError, match="mps is not available"):
            resolve_device("mps")


@pytest.mark.parametrize("spec", ["gpu", "cuda:x", "tpu:0", "meta"])
def test_names_that_are_not_devices_say_which_are(spec: str) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_device(spec)
    message = str(info.value)
    assert info.value.field == "device"
    assert "auto, cpu, cuda:N or mps" in message
    assert "available: cpu" in message


def test_amp_modes_the_cpu_can_run() -> None:
    cpu = torch.device("cpu")
    check_amp(cpu, "off")
    check_amp(cpu, "bf16")
    with pytest.raises(ConfigError) as info:
        check_amp(cpu, "fp16")
    assert info.value.field == "amp" and "bf16 or off" in str(info.value)


def test_amp_dtypes() -> None:
    assert amp_dtype("fp16") is torch.float16
    assert amp_dtype("bf16") is torch.bfloat16
    assert amp_dtype("off") is None


@pytest.mark.gpu
def test_every_gpu_resolves_and_reports_its_free_memory() -> None:
    for info in list_devices()[1:]:
        if info.kind != "cuda":
            continue
        assert resolve_device(info.spec) == torch.device(info.spec)
        assert info.free_bytes is not None and 0 < info.free_bytes <= info.capacity_bytes
        assert info.name == torch.cuda.get_device_name(torch.device(info.spec))
    check_amp(torch.device("cuda:0"), "fp16")


def test_under_a_process_limit_the_cpu_s_capacity_is_that_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ulimit -v`: the form's device list and `devices` give the limit, as the memory plot and the finder do."""
    import resource

    limit = psutil.Process().memory_info().vms + 2 * 2**30
    monkeypatch.setattr(
        resource,
        "getrlimit",
        lambda which: (
            (limit, resource.RLIM_INFINITY)
            if which == resource.RLIMIT_AS
            else (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
        ),
    )
    cpu = list_devices(query_free=False)[0]
    assert cpu.capacity_bytes == limit
    assert cpu.free_bytes is not None and 0 < cpu.free_bytes <= 2 * 2**30


def test_a_data_parallel_run_needs_a_core_or_a_gpu_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    check_process_count(RunConfig(device="cpu", nproc=4))
    check_process_count(RunConfig(device="auto", nproc=4))  # no GPU: auto means CPU processes
    with pytest.raises(ConfigError, match="5 CPU processes on 4 CPU cores") as cpu:
        check_process_count(RunConfig(device="cpu", nproc=5, batch_size=125))
    with pytest.raises(ConfigError, match="this machine has no CUDA GPU") as no_gpu:
        check_process_count(RunConfig(device="cuda", nproc=2))
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    check_process_count(RunConfig(device="cuda", nproc=2))
    with pytest.raises(ConfigError, match="3 processes need 3 GPUs, but this machine has 2") as gpus:
        check_process_count(RunConfig(device="cuda", nproc=3, batch_size=129))
    assert (cpu.value.field, no_gpu.value.field, gpus.value.field) == ("nproc", "device", "nproc")
