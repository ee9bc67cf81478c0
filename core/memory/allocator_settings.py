"""The CUDA caching allocator's `expandable_segments`, set for one run inside this process.

`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` is read once, when CUDA initialises: a window or a comparison
that trains several runs in one process cannot use it per run. torch changes the setting at run time through
`torch._C._accelerator_setAllocatorSettings` (earlier `torch.cuda.memory._set_allocator_settings`, private
and now deprecated: both are looked up here, so a change in torch breaks one place). A changed setting applies to
segments made after it: the cache is emptied first, so the run's memory comes from segments of its own kind.
The previous setting comes back when the run ends. The CPU and MPS have no caching allocator segments: there
the setting changes nothing, and the run says so once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..base.errors import ConfigError
from ..base.text import Message

if TYPE_CHECKING:
    import torch

FIELD = "expandable_segments"
_KEY = "expandable_segments:"


def _setter() -> Callable[[str], None] | None:
    """torch's run-time allocator setting, or None when this torch has none."""
    import torch

    setter = getattr(torch._C, "_accelerator_setAllocatorSettings", None)
    if setter is None:
        setter = getattr(getattr(torch.cuda, "memory", None), "_set_allocator_settings", None)
    return setter


def _current_text() -> str:
    """The allocator settings in force as torch holds them ('' where it cannot say, or none were given)."""
    import os

    import torch

    getter = getattr(torch._C, "_accelerator_getAllocatorSettings", None)
    if getter is not None:
        return str(getter())
    return os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "") or os.environ.get("PYTORCH_ALLOC_CONF", "")


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
    """Why this torch cannot give a run `expandable_segments=enabled` on CUDA, or None when it can (it is
    already so, or torch can change it at run time)."""
    if setting_in(_current_text()) == enabled or _setter() is not None:
        return None
    return Message(
        "this PyTorch build cannot change the CUDA allocator's expandable segments inside a running process "
        "(torch._C._accelerator_setAllocatorSettings is missing); set PYTORCH_CUDA_ALLOC_CONF="
        "expandable_segments:{value} before starting instead",
        value="True" if enabled else "False",
    )


def check_expandable_segments(enabled: bool, device: torch.device) -> None:
    """ConfigError (field expandable_segments) when a run on `device` asks for a setting this torch cannot give
    it: asked before a run (or a comparison's first run) builds anything."""
    reason = unsupported_reason(enabled) if device.type == "cuda" else None
    if reason is not None:
        raise ConfigError(FIELD, reason)


class ExpandableSegments:
    """`apply()` before a run builds anything on `device`, `restore()` when it has ended and given its memory back."""

    def __init__(self, device: torch.device, enabled: bool) -> None:
        self.device = device
        self.enabled = enabled
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
        previous = setting_in(_current_text())
        if previous == self.enabled:
            return None
        check_expandable_segments(self.enabled, self.device)
        setter = _setter()
        assert setter is not None  # checked: the setting differs, so torch must be able to change it
        import torch

        if torch.cuda.is_initialized():
            torch.cuda.empty_cache()  # segments cached by the last run are of the other kind: new ones for this run
        setter(_KEY + str(self.enabled))
        self._previous = previous
        if self.enabled:
            return Message("expandable segments on for this run: the CUDA allocator grows its segments in place")
        return Message(
            "expandable segments off for this run (the environment's allocator settings turn them on): "
            "the CUDA allocator caches fixed segments"
        )

    def restore(self) -> None:
        """Put back the setting `apply()` changed (after the run's memory went back: its segments are gone)."""
        if self._previous is None:
            return
        setter = _setter()
        if setter is not None:
            setter(_KEY + str(self._previous))
        self._previous = None
