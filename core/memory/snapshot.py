"""CUDA memory history snapshots that pytorch.org/memory_viz opens.

Wraps torch's private `torch.cuda.memory._record_memory_history` / `_dump_snapshot` (torch >= 2.1) so
a change there breaks one place. Recording is always bounded (`max_entries`): an unbounded history
grows without limit during a long run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.errors import UserError
from ..base.text import Message, message_of
from ..events.events import LogMessage, SnapshotSaved

if TYPE_CHECKING:
    import torch

DEFAULT_MAX_ENTRIES = 100_000


def unsupported_reason(device: torch.device | str) -> str | None:
    """Why snapshots cannot be recorded on `device`, or None when they can."""
    import torch

    device = torch.device(device)
    if device.type != "cuda":
        return Message(
            "memory history is recorded by the CUDA caching allocator; {device_type} has none", device_type=device.type
        )
    memory = getattr(torch.cuda, "memory", None)
    if memory is None or not hasattr(memory, "_record_memory_history") or not hasattr(memory, "_dump_snapshot"):
        return Message("this PyTorch build cannot record memory history (needs torch >= 2.1)")
    return None


class MemoryHistory:
    """Records allocator events on one CUDA device; `save()` writes a snapshot (a pickle) any time."""

    def __init__(self, device: torch.device | str, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        reason = unsupported_reason(device)
        if reason is not None:
            raise UserError(Message("memory snapshot: {reason}", reason=reason))
        self.max_entries = max_entries
        self.recording = False

    def start(self) -> None:
        import torch

        torch.cuda.memory._record_memory_history(max_entries=self.max_entries)
        self.recording = True

    def save(self, path: str | os.PathLike[str]) -> int:
        """Write the snapshot; returns its size in bytes."""
        import torch

        from ..base.outputs import replace_atomically

        target = Path(path)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            # a temporary file renamed over the target: a full disk never leaves a truncated pickle
            replace_atomically(target, lambda temporary: torch.cuda.memory._dump_snapshot(str(temporary)))
            return target.stat().st_size
        except OSError as exc:
            raise UserError(
                Message("memory snapshot: cannot write {path}: {why}", path=str(target), why=exc.strerror or str(exc))
            ) from None

    def stop(self) -> None:
        if self.recording:
            import torch

            torch.cuda.memory._record_memory_history(enabled=None)
            self.recording = False


def snapshot_event(history: MemoryHistory | None, path: str, step: int) -> SnapshotSaved | LogMessage:
    """Save a snapshot of `history` to `path`; the event that tells the run's observers how that went."""
    if history is None:
        return LogMessage("warning", Message("no memory history is being recorded in this run: snapshot not saved"))
    try:
        size = history.save(path)
    except UserError as exc:
        return LogMessage("error", message_of(exc))
    return SnapshotSaved(step, path, size)
