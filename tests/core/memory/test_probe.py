"""Memory readings (what the memory plot shows) and clearing the cache (the Clear cache button)."""

from __future__ import annotations

import resource
import threading
import time

import psutil
import pytest
import torch

from gpu_train_monitor.device.host_memory import host_free_bytes
from gpu_train_monitor.memory.probe import MemoryProbe, clear_cache, has_cache

MB = 2**20


def test_cpu_sample_is_process_rss_against_system_memory() -> None:
    sample = MemoryProbe("cpu").sample()
    assert sample.device == "cpu"
    assert not sample.has_allocator
    assert sample.allocated_bytes == sample.process_rss_bytes > 50 * MB  # torch alone is bigger than that
    assert sample.reserved_bytes == 0 and sample.peak_reserved_bytes == 0
    assert sample.peak_allocated_bytes >= sample.allocated_bytes
    assert sample.capacity_bytes == psutil.virtual_memory().total
    assert sample.device_used_bytes is not None and 0 < sample.device_used_bytes < sample.capacity_bytes
    assert abs(sample.time_s - time.monotonic()) < 5.0
    assert sample.alloc_retries is None and sample.allocator_ooms is None  # only CUDA's allocator counts them


def test_cpu_peak_remembers_a_freed_allocation_until_reset() -> None:
    probe = MemoryProbe("cpu")
    probe.reset_peak()
    before = probe.sample()
    # 1 GB, touched so it is resident: a margin no other thread's frees in this test process can eat (a test
    # worker's RSS moves by tens of MB with whatever earlier tests left running; 256 MB once grew by nothing)
    big = torch.ones(1024 * MB, dtype=torch.uint8)
    during = probe.sample()
    assert during.allocated_bytes >= before.allocated_bytes + 512 * MB
    del big
    after = probe.sample()
    assert after.peak_allocated_bytes >= during.allocated_bytes
    assert probe.peak_rss_bytes == after.peak_allocated_bytes
    probe.reset_peak()
    fresh = probe.sample()
    assert fresh.peak_allocated_bytes == fresh.allocated_bytes  # the peak starts again from now


def test_sampling_from_many_threads_is_safe_and_peaks_never_drop() -> None:
    probe = MemoryProbe("cpu")
    errors: list[BaseException] = []
    drops: list[tuple[int, int]] = []

    def sample_repeatedly() -> None:
        last = 0
        try:
            for _ in range(100):
                peak = probe.sample().peak_allocated_bytes
                if peak < last:
                    drops.append((last, peak))
                last = peak
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=sample_repeatedly) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors and not drops


def test_sampling_is_cheap_enough_for_a_30_hz_timer() -> None:
    probe = MemoryProbe("cpu")
    start = time.perf_counter()
    for _ in range(100):
        probe.sample()
    assert (time.perf_counter() - start) / 100 < 0.02  # a 30 Hz redraw has 33 ms per frame


def test_the_cpu_has_no_cache_to_clear() -> None:
    assert clear_cache("cpu") == 0
    assert not has_cache("cpu") and not has_cache(torch.device("cpu"))
    assert has_cache("cuda") and has_cache("cuda:1") and has_cache("mps")


def test_cpu_free_memory_is_what_the_system_has_available() -> None:
    free = MemoryProbe("cpu").free_bytes()
    assert 0 < free <= psutil.virtual_memory().total
    assert abs(free - host_free_bytes()) < 512 * MB  # two readings a moment apart


@pytest.mark.gpu
def test_cuda_allocations_show_up_and_clearing_the_cache_gives_them_back() -> None:
    device = torch.device("cuda:0")
    probe = MemoryProbe(device)
    clear_cache(device)
    probe.reset_peak()
    before = probe.sample()
    assert before.has_allocator and before.capacity_bytes > 0
    block = torch.empty(256 * MB, dtype=torch.uint8, device=device)
    during = probe.sample()
    assert during.allocated_bytes >= before.allocated_bytes + 256 * MB
    assert during.reserved_bytes >= during.allocated_bytes
    del block
    cached = probe.sample()
    assert cached.allocated_bytes < during.allocated_bytes
    assert cached.peak_allocated_bytes >= during.allocated_bytes
    freed = clear_cache(device)
    assert freed >= 256 * MB
    assert probe.sample().reserved_bytes <= cached.reserved_bytes - 256 * MB


def test_cpu_capacity_is_the_process_limit_when_lower_than_system_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under `ulimit -v` the plot's capacity is the limit, not the machine's memory; the finder's is what the limit
    leaves (tests/core/finder/test_budget.py)."""
    from gpu_train_monitor.config.run_config import RunConfig
    from gpu_train_monitor.finder.search import default_capacity

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
    sample = MemoryProbe("cpu").sample()
    assert (sample.capacity_bytes, sample.capacity_limit) == (limit, "RLIMIT_AS")
    free = host_free_bytes()
    assert abs(default_capacity(RunConfig(device="cpu")) - free) < 256 * 2**20  # read a moment apart
    assert free <= 2 * 2**30 and free < sample.capacity_bytes  # what the address space has left, read now
    monkeypatch.setattr(resource, "getrlimit", lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    unlimited = MemoryProbe("cpu").sample()
    assert (unlimited.capacity_bytes, unlimited.capacity_limit) == (psutil.virtual_memory().total, None)


@pytest.mark.gpu
def test_cuda_counts_allocation_retries_and_allocator_out_of_memory() -> None:
    """Under a 1 GiB limit, four cached 200 MiB segments leave no room for a 600 MiB one: the allocator frees its
    cache and tries again (a retry); then 2 GiB cannot fit at all (an out of memory)."""
    device = torch.device("cuda:0")
    probe = MemoryProbe(device)
    clear_cache(device)
    total = torch.cuda.get_device_properties(device).total_memory
    torch.cuda.set_per_process_memory_fraction((1024 * MB + torch.cuda.memory_reserved(device)) / total, device)
    try:
        before = probe.sample()
        assert before.alloc_retries is not None and before.allocator_ooms is not None
        blocks = [torch.empty(200 * MB, dtype=torch.uint8, device=device) for _ in range(4)]
        del blocks  # cached: reserved stays, allocated drops
        big = torch.empty(600 * MB, dtype=torch.uint8, device=device)
        retried = probe.sample()
        assert retried.alloc_retries >= before.alloc_retries + 1
        with pytest.raises(torch.OutOfMemoryError):
            torch.empty(2048 * MB, dtype=torch.uint8, device=device)
        del big
        assert probe.sample().allocator_ooms >= before.allocator_ooms + 1
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0, device)
        clear_cache(device)
