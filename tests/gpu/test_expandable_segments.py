"""Expandable segments per run on CUDA: the ready-made "expandable segments off vs on" races the two settings in
one process, each run's segments read back of the kind it asked for, its headline states each run's peak
reserved and cache gap from their own counters, and the allocator's setting is the user's again afterwards.
Skipped without CUDA."""

from __future__ import annotations

import pytest
import torch

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.compare.comparison import Comparison
from gpu_train_monitor.compare.plan import ready_comparisons
from gpu_train_monitor.compare.segments_headline import cache_gap
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.memory.allocator_settings import segments_read_back, setting_in, settings_text

pytestmark = pytest.mark.gpu

BASE = RunConfig(model="resnet18", synthetic_samples=4096, batch_size=64, max_steps=40, report_interval=0.01)


def test_the_ready_comparison_runs_each_setting_and_reads_it_back() -> None:
    before = setting_in(settings_text())
    (segments,) = [c for c in ready_comparisons(BASE, "cuda:0", False) if c.name == "expandable segments off vs on"]
    result = Comparison(BASE, segments.overrides).run()
    assert result.status == "completed", result.headline
    off, on = result.runs
    assert (off.segments_expandable, on.segments_expandable) == (False, True)  # read from the segments themselves
    assert off.peak_reserved_bytes and on.peak_reserved_bytes
    assert off.peak_allocated_bytes and on.peak_allocated_bytes
    off_gap, on_gap = cache_gap(off), cache_gap(on)
    assert off_gap is not None and on_gap is not None
    assert result.headline.startswith(
        "expandable segments (read back from the allocator's segments of each run): "
        f"peak reserved {format_bytes(off.peak_reserved_bytes)} off vs {format_bytes(on.peak_reserved_bytes)} on, "
        f"cache gap (peak reserved minus peak allocated) {format_bytes(off_gap)} vs {format_bytes(on_gap)}; "
    )
    assert result.losses_agree is True  # where the tensors live changes nothing they compute
    assert setting_in(settings_text()) is before  # the user's setting is back


def test_auto_after_an_on_run_makes_segments_of_the_user_s_kind() -> None:
    user = setting_in(settings_text())
    forced = "off" if user else "on"
    finished = TrainingSession(BASE.replace(device="cuda:0", max_steps=4, expandable_segments=forced)).run()
    assert finished.status == "completed", finished.message
    assert finished.summary.expandable_segments is (forced == "on")
    finished = TrainingSession(BASE.replace(device="cuda:0", max_steps=4, expandable_segments="auto")).run()
    assert finished.status == "completed", finished.message
    assert finished.summary.expandable_segments is None  # auto: nothing set, nothing claimed
    torch.cuda.empty_cache()
    block = torch.empty(64 * 2**20, dtype=torch.uint8, device="cuda:0")  # a new segment, made under the user's setting
    expandable, fixed = segments_read_back(torch.device("cuda:0"))
    assert (expandable > 0, fixed > 0) == (user, not user)
    del block
