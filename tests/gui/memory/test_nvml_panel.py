"""The GPU (NVML) tab's allocator line: the cache (reserved minus allocated), retries and cudaMalloc failures on
CUDA; on other devices, why there are none."""

from __future__ import annotations

import time

from gpu_train_monitor.events.events import MemorySample
from gpu_train_monitor.gui.memory.nvml_panel import NvmlPanel
from gpu_train_monitor.memory.probe import MemoryProbe

GB = 10**9


def _cuda_sample(allocated: int, reserved: int, retries: int | None, ooms: int | None) -> MemorySample:
    return MemorySample(
        time.monotonic(),
        "cuda:0",
        allocated,
        reserved,
        allocated,
        reserved,
        80 * GB,
        None,
        GB,
        True,
        None,
        retries,
        ooms,
    )


def test_cuda_shows_the_cache_gap_retries_and_failures(qtbot) -> None:
    panel = NvmlPanel()
    qtbot.addWidget(panel)
    panel.show_cache(_cuda_sample(10 * GB, 14 * GB, 3, 1), "cuda")
    text = panel.cache.text()
    assert "4.00 GB reserved but not allocated" in text
    assert "3 allocation retries" in text and "1 cudaMalloc failures" in text
    panel.show_cache(_cuda_sample(10 * GB, 14 * GB, None, None), "cuda")  # a reading without them: nothing claimed
    assert panel.cache.text() == ""


def test_a_cpu_reading_says_why_there_is_no_cache(qtbot) -> None:
    panel = NvmlPanel()
    qtbot.addWidget(panel)
    panel.show_cache(MemoryProbe("cpu").sample(), "cpu")
    assert "CUDA's caching allocator; cpu has none" in panel.cache.text()
