"""The scripts of the watched runs the Runs tab lists ("train.py (~/proj)"): what tells two watched runs apart when
both are a "Sequential" trained by "script". A run's script is in its recorded config (gpu_train_monitor.watch.script's
`script`, `module` and `argv`), which the list's rows do not carry: it is read once per run here and kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpu_train_monitor.gui.history.row_text import script_text
from gpu_train_monitor.store.run_store import RunNotFound, RunRow, RunStore


class WatchedScripts:
    """run id -> its script's text, for the watched runs of the rows last read (read from the store once each)."""

    def __init__(self) -> None:
        self.texts: dict[int, str] = {}
        self._read: dict[int, str] = {}  # run id -> the uid it was read for (an id reused after a delete)

    def update(self, store: RunStore, rows: Sequence[RunRow]) -> dict[int, str]:
        """The scripts of `rows`' watched runs (their texts by run id); StoreError as the store raises it."""
        ids = {row.id for row in rows}
        for run_id in set(self._read) - ids:  # deleted
            self._read.pop(run_id)
            self.texts.pop(run_id, None)
        for row in rows:
            if row.placement or self._read.get(row.id) == row.uid:  # a run of ours, or read already
                continue
            try:
                text = script_text(row, store.config(row.id))
            except (RunNotFound, ValueError):  # deleted meanwhile, or a config that is no JSON
                text = ""
            self._read[row.id] = row.uid
            if text:
                self.texts[row.id] = text
            else:
                self.texts.pop(row.id, None)
        return self.texts
