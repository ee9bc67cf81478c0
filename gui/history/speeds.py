"""The images/s the Runs tab shows, the same figure a run's own window shows: the median of the run's reports, the
first left out as the warm-up (`gpu_train_monitor.gui.views.stats_panel.median_rate`).

The store's `runs.samples_per_s` is that median once a run finished with a summary; until then (a run still
training, one interrupted before its summary) it holds only the latest report's rate. For those runs the rates
of their reports are read here, only the reports added since the last read, and their median replaces it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from gpu_train_monitor.gui.views.stats_panel import median_rate
from gpu_train_monitor.store.run_store import RunRow, RunStore

WITHOUT_SUMMARY = ("running", "interrupted")  # statuses whose samples_per_s is the latest report's


@dataclasses.dataclass
class _Rates:
    key: tuple[str, int, float]  # the run's uid, resumes and start: a resumed run is read again
    last_step: int
    rates: dict[int, float]  # step -> images/s of that report


class MedianSpeeds:
    """Reads the reports' rates of runs without a summary (incrementally) and gives their rows the median."""

    def __init__(self) -> None:
        self._runs: dict[int, _Rates] = {}

    def apply(self, store: RunStore, rows: Sequence[RunRow]) -> list[RunRow]:
        """`rows` with `samples_per_s` the median of the reports for each run still without a summary;
        StoreError as the store's reads raise it."""
        shown: list[RunRow] = []
        kept: set[int] = set()
        for row in rows:
            if row.status not in WITHOUT_SUMMARY:
                shown.append(row)
                continue
            kept.add(row.id)
            shown.append(dataclasses.replace(row, samples_per_s=self._median(store, row)))
        for run_id in set(self._runs) - kept:  # finished (its summary's median is the store's) or deleted
            del self._runs[run_id]
        return shown

    def _median(self, store: RunStore, row: RunRow) -> float | None:
        key = (row.uid, row.resumes, row.started_at)
        known = self._runs.get(row.id)
        if known is None or known.key != key:
            known = self._runs[row.id] = _Rates(key, 0, {})
        for report in store.reports(row.id, after_step=known.last_step):
            known.rates[report.step] = report.samples_per_s
            known.last_step = max(known.last_step, report.step)
        return median_rate([known.rates[step] for step in sorted(known.rates)])
