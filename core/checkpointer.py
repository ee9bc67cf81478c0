"""A session's checkpointing: when its policy says to save, the save itself, and pruning old checkpoints.

A save that fails (a full disk, a folder that cannot be written) is a warning in the run's log, never the
end of the run. Only the policy's own checkpoints are pruned (the newest `keep` stay, per run); requested
ones stay where the user asked for them. A run never replaces a checkpoint file in its folder that it did
not write itself (another run's, saved meanwhile by one still going on elsewhere): its checkpoints move to
a folder of their own instead.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

import torch

from core import checkpoint
from core.data.batches import BatchEpoch, BatchSource, Note
from core.checkpoint import AUTOMATIC_REASONS, CheckpointPolicy
from core.checkpoint_state import RandomStates, capture, random_states, restore
from core.config.run_config import RunConfig
from core.run.events import CheckpointSaved, LogMessage
from core.base.text import Message
from core.recipe import RunParts
from core.run_state import RunState


class Checkpointer:
    """Saves one run's checkpoints as its policy and requests say; the session calls it at step boundaries."""

    def __init__(self, policy: CheckpointPolicy, run_uid: str) -> None:
        self.policy = policy
        self.run_uid = run_uid
        self.epoch_start: RandomStates | None = None  # the generators when the current epoch began
        self.saved_step = 0  # the last step a checkpoint holds (a resumed run: the one it started from)
        self.folder = policy.folder(run_uid)  # where the run's own checkpoints go
        self._automatic: list[Path] = []  # this run's automatic checkpoints, oldest first
        self._written: set[Path] = set()  # every file this run saved in its folder

    def epoch_started(self, device: torch.device, source: BatchSource) -> None:
        self.epoch_start = random_states(device, source)

    def restore(self, saved: dict, path: str, parts: RunParts, run: RunState, device: torch.device
                ) -> tuple[BatchEpoch | None, list[Note]]:
        """Load the checkpoint `saved` (read from `path`) into a freshly built run: (the epoch it was saved
        in, sought to its position, or None when that epoch had ended; notes for the run's log)."""
        epoch, self.epoch_start, notes = restore(saved, path, parts, run, device)
        self.saved_step = run.step
        if epoch is None:
            resumed = Message("resumed from {path}: step {step}, at the end of epoch {epoch}", path=path, step=run.step,
                              epoch=run.epoch)
        else:
            resumed = Message("resumed from {path}: step {step}, at epoch {epoch}", path=path, step=run.step,
                              epoch=run.epoch)
        return epoch, [("info", resumed), *notes]

    def every_due(self, step: int) -> bool:
        every = self.policy.every_steps
        return every > 0 and step % every == 0 and step != self.saved_step

    def stop_due(self, step: int) -> bool:
        """A stop (or max_steps) mid-epoch keeps what was trained since the last checkpoint."""
        return self.policy.epoch_end and step != self.saved_step

    def save(self, reason: str, path: str | None, config: RunConfig, device: torch.device, parts: RunParts,
             run: RunState, epoch: BatchEpoch | None) -> CheckpointSaved | LogMessage:
        """Save the run at a step boundary (`epoch` None: the epoch has ended and been validated) to `path`,
        or to the run's folder; the event that tells the run's observers how that went."""
        target = Path(path).expanduser() if path else self._own_path(run.step)
        position = None if epoch is None else epoch.position()
        payload = capture(self.run_uid, config, device, parts, run, self.epoch_start, position)
        try:
            size = checkpoint.save(target, payload)
        except (OSError, RuntimeError) as exc:
            why = getattr(exc, "strerror", None) or (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            return LogMessage("warning", Message("checkpoint not saved at step {step}: cannot write {path} ({why}); "
                                                 "training goes on", step=run.step, path=str(target), why=why))
        self.saved_step = run.step
        if not path:
            self._written.add(target)
        self._prune(target, reason)
        return CheckpointSaved(run.step, run.epoch, str(target), size, reason)

    def _own_path(self, step: int) -> Path:
        """The run's file for `step`; when a file this run did not write is there, one in a new folder."""
        target = checkpoint.step_path(self.folder, step)
        if target not in self._written and os.path.lexists(target):
            self.folder = self.policy.folder(f"{self.run_uid}-{secrets.token_hex(4)}")
            target = checkpoint.step_path(self.folder, step)
        return target

    def _prune(self, target: Path, reason: str) -> None:
        if target in self._automatic:  # saved again (a request at the same step): the newest version counts
            self._automatic.remove(target)
        if reason not in AUTOMATIC_REASONS:
            return
        self._automatic.append(target)
        while self.policy.keep and len(self._automatic) > self.policy.keep:
            with contextlib.suppress(OSError):
                self._automatic.pop(0).unlink()

