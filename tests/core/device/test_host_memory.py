"""The host memory a process may use: system memory under the tightest limit (what a CPU run can fill)."""

from __future__ import annotations

import resource

import psutil
import pytest

from gpu_train_monitor.device.host_memory import host_free_bytes

MB = 2**20


def test_host_free_memory_honours_the_data_size_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    data_used = psutil.Process().memory_info().data
    limit = data_used + 300 * MB
    monkeypatch.setattr(resource, "getrlimit", lambda which: (limit, resource.RLIM_INFINITY))
    free = host_free_bytes()
    assert free <= 300 * MB + 64 * MB  # what is left under the limit, not the machine's free memory
    assert free < psutil.virtual_memory().available
    monkeypatch.setattr(resource, "getrlimit", lambda which: (data_used // 2, resource.RLIM_INFINITY))
    assert host_free_bytes() == 0  # already past the limit: nothing fits
    monkeypatch.setattr(resource, "getrlimit", lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert abs(host_free_bytes() - psutil.virtual_memory().available) < 512 * MB  # no limit: what the system has
