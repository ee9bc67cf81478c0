"""The CUDA caching allocator's `expandable_segments`, set for one run inside this process, and read back.

`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` is read once, at the allocator's first use: a window or a
comparison that trains several runs in one process cannot use it per run. torch changes the setting at run time
through `torch._C._accelerator_setAllocatorSettings` (earlier `torch.cuda.memory._set_allocator_settings`, private
and now deprecated: both are looked up here, so a change in torch breaks one place). A changed setting applies to
segments made after it, so every CUDA run starts from an empty cache (cuBLAS's workspaces included): nothing an
earlier run in this process left cached, of either kind, counts in its reserved memory. The previous setting comes
back when the run ends.

What torch reports back is only the settings text last given to it; whether the allocator really grew its segments
in place (a platform without CUDA's virtual memory API keeps fixed ones, with a warning) is read from the segments
themselves (`torch.cuda.memory_snapshot()`'s `is_expandable`) before the run gives its memory back. The CPU and MPS
have no such segments: there `on` changes nothing, and the run says so once.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..base.errors import ConfigError
from ..base.text import Message

if TYPE_CHECKING:
    import torch

FIELD = "expandable_segments"
_KEY = "expandable_segments:"
ENV_NAMES = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")


def wanted(choice: str) -> bool | None:
    """The config's choice as a setting: 'on' True, 'off' False, 'auto' None (leave the allocator as it is)."""
    return {"on": True, "off": False}.get(choice)


def _setter() -> Callable[[str], None] | None:
    """torch's run-time allocator setting, or None when this torch has none."""
    import torch

    setter = getattr(torch._C, "_accelerator_setAllocatorSettings", None)
    if setter is None:
        setter = getattr(getattr(torch.cuda, "memory", None), "_set_allocator_settings", None)
    return setter


def settings_text() -> str:
    """The allocator settings last given to torch (the environment's, or a later run-time change); '' for none."""
    import torch

    getter = getattr(torch._C, "_accelerator_getAllocatorSettings", None)
    if getter is not None:
        return str(getter())
    return next((os.environ[name] for name in ENV_NAMES if os.environ.get(name)), "")


def setting_in(text: str) -> bool:
    """Whether allocator settings `text` ('max_split_size_mb:128,expandable_segments:True') turn expandable
    segments on: the last mention wins, as in torch's parser; none means off (torch's default)."""
    found = False
    for item in text.replace(";", ",").split(","):
        key, _, value = item.strip().partition(":")
        if key.strip() == FIELD:
            found = value.strip().lower() == "true"
    return found


def unsupported_reason(enabled: bool) -> str | None:
    """Why this torch cannot give a run expandable segments `enabled` on CUDA, or None when it can (they are
    already so, or torch can change them at run time)."""
    if setting_in(settings_text()) == enabled or _setter() is not None:
        return None
    return Message(
        "this PyTorch build cannot change the CUDA allocator's expandable segments inside a running process "
        "(torch._C._accelerator_setAllocatorSettings is missing); set PYTORCH_CUDA_ALLOC_CONF="
        "expandable_segments:{value} before starting instead",
        value="True" if enabled else "False",
    )


def check_expandable_segments(choice: str, device: torch.device) -> None:
    """ConfigError (field expandable_segments) when a run on `device` asks for a setting this torch cannot give
    it: asked before a run (or a comparison's first run) builds anything."""
    enabled = wanted(choice)
    reason = unsupported_reason(enabled) if device.type == "cuda" and enabled is not None else None
    if reason is not None:
        raise ConfigError(FIELD, reason)


def segments_read_back(device: torch.device) -> tuple[int, int]:
    """(expandable, fixed): how many of the allocator's segments on `device` are of each kind now."""
    import torch

    index = device.index if device.index is not None else torch.cuda.current_device()
    try:
        snapshot = torch.cuda.memory_snapshot(include_traces=False)  # the segments only: no history to copy
    except TypeError:  # a torch before include_traces
        snapshot = torch.cuda.memory_snapshot()
    segments = [s for s in snapshot if s.get("device") == index]
    expandable = sum(1 for s in segments if s.get("is_expandable"))
    return expandable, len(segments) - expandable


def start_empty(device: torch.device) -> None:
    """Give back everything the allocator caches on `device` (cuBLAS's workspaces too, which outlive a run):
    the next segments are made under the setting in force now."""
    import torch

    if not torch.cuda.is_initialized():
        return  # nothing allocated yet in this process
    with torch.cuda.device(device):
        torch.cuda.synchronize()
        clear_workspaces = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
        if clear_workspaces is not None:
            clear_workspaces()
        torch.cuda.empty_cache()


class ExpandableSegments:
    """`apply()` before a run builds anything on `device`, `read_back()` at its end while its tensors still live,
    `restore()` once it has given its memory back."""

    def __init__(self, device: torch.device, choice: str) -> None:
        self.device = device
        self.enabled = wanted(choice)  # None: as the allocator is set (auto)
        self._previous: bool | None = None  # the setting to put back; None: nothing was changed

    def apply(self) -> str | None:
        """Set the allocator for this run; returns a line for the run's log, or None when there is nothing to
        say. ConfigError (field expandable_segments) when this torch cannot change it."""
        if self.device.type != "cuda":
            if not self.enabled:
                return None
            return Message(
                "expandable segments change nothing on {device}: only CUDA's caching allocator has segments to expand",
                device=self.device.type,
            )
        start_empty(self.device)
        previous = setting_in(settings_text())
        if self.enabled is None or previous == self.enabled:
            return None
        check_expandable_segments("on" if self.enabled else "off", self.device)
        setter = _setter()
        assert setter is not None  # checked: the setting differs, so torch must be able to change it
        setter(_KEY + str(self.enabled))
        self._previous = previous
        if self.enabled:
            return Message("expandable segments on for this run: the CUDA allocator grows its segments in place")
        return Message(
            "expandable segments off for this run (the environment's allocator settings turn them on): "
            "the CUDA allocator caches fixed segments"
        )

    def read_back(self) -> bool | None:
        """Whether the run's segments were expandable, read from the allocator (on CUDA, before the run's memory
        goes back): True all of them, False none, None on another device, with no segments, or of both kinds."""
        if self.device.type != "cuda":
            return None
        try:
            expandable, fixed = segments_read_back(self.device)
        except RuntimeError:  # a CUDA error the run ended in: its end must still be reported, with nothing claimed
            return None
        if expandable and not fixed:
            return True
        return False if fixed and not expandable else None

    def restore(self) -> None:
        """Put back the setting `apply()` changed (after the run's memory went back: its segments are gone)."""
        if self._previous is None:
            return
        setter = _setter()
        if setter is not None:
            setter(_KEY + str(self._previous))
        self._previous = None
