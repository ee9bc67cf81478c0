"""Expandable segments per run: the allocator settings text read as torch's parser reads it, torch's run-time
setting and its read-back agreeing, and the setting off CUDA changing nothing."""

from __future__ import annotations

import pytest
import torch

from gpu_train_monitor.memory.allocator_settings import (
    ExpandableSegments,
    check_expandable_segments,
    setting_in,
    settings_text,
    unsupported_reason,
    wanted,
)


@pytest.mark.parametrize(
    ("text", "on"),
    [
        ("", False),
        ("expandable_segments:True", True),
        ("expandable_segments:true", True),
        ("max_split_size_mb:128, expandable_segments:True", True),
        ("expandable_segments:True,expandable_segments:False", False),  # the last mention wins
        ("expandable_segments:False", False),
        ("garbage_collection_threshold:0.6", False),
    ],
)
def test_the_settings_text_turns_them_on_only_when_it_says_so_last(text: str, on: bool) -> None:
    assert setting_in(text) is on


def test_the_choices_are_a_setting_or_none_for_auto() -> None:
    assert (wanted("on"), wanted("off"), wanted("auto")) == (True, False, None)


def test_torch_reports_back_the_setting_it_was_given() -> None:
    """The run-time setter this torch has, and its getter, read back (on a CPU build too: no segment is made)."""
    before = settings_text()
    try:
        torch._C._accelerator_setAllocatorSettings("expandable_segments:True")
        assert setting_in(settings_text()) is True
        torch._C._accelerator_setAllocatorSettings("expandable_segments:False")
        assert setting_in(settings_text()) is False
    finally:
        torch._C._accelerator_setAllocatorSettings(before or "expandable_segments:False")
    assert unsupported_reason(True) is None and unsupported_reason(False) is None  # this torch can change it


def test_off_cuda_the_setting_changes_nothing_and_says_so_for_on_only() -> None:
    cpu = torch.device("cpu")
    check_expandable_segments("on", cpu)  # no error: nothing to set
    assert ExpandableSegments(cpu, "auto").apply() is None
    assert ExpandableSegments(cpu, "off").apply() is None
    on = ExpandableSegments(cpu, "on")
    before = settings_text()
    note = on.apply()
    assert note == "expandable segments change nothing on cpu: only CUDA's caching allocator has segments to expand"
    assert on.read_back() is None  # no segments to read
    on.restore()
    assert settings_text() == before  # the allocator's settings untouched
