"""The run store as a launched run's follower (`gpu_train_monitor.gui.launch.launcher`) reads it: opened read-only
when first needed (the child may not have created it yet: then the next poll tries again), closed after a problem
(locked for a moment, or replaced) to be opened afresh at the next poll, and closed when the run has ended.
"""

from __future__ import annotations

from pathlib import Path

from gpu_train_monitor.store.run_store import RunStore, StoreError


class ReadOnlyStore:
    """The store at `path`, opened read-only on demand."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._store: RunStore | None = None

    def open(self) -> RunStore | None:
        """The store, opened now if it was not; None while it cannot be (not created yet, or being created)."""
        if self._store is None:
            try:
                self._store = RunStore(self.path, readonly=True)
            except StoreError:
                return None
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
