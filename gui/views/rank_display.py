"""A data-parallel run's ranks on a run's widgets, the same for a run trained by the window
(`gpu_train_monitor.gui.views.run_view`, fed by events) and a recorded one (`gpu_train_monitor.gui.history.run_window`,
fed by the store): memory lines per rank on the memory plot, each rank's images/s in the stats panel, and a rank choice
on the memory breakdown. An ordinary run (one rank) shows none of it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from gpu_train_monitor.events.events import RankSample
from gpu_train_monitor.gui.plots.memory_plot import MemoryPlot
from gpu_train_monitor.gui.plots.rank_series import rank_names, speeds_text
from gpu_train_monitor.gui.views.breakdown_view import BreakdownView
from gpu_train_monitor.gui.views.stats_panel import StatsPanel


class RankDisplay:
    """Keeps which ranks a run has and puts each rank's readings on the widgets."""

    def __init__(self, memory_plot: MemoryPlot, stats: StatsPanel, breakdown_view: BreakdownView) -> None:
        self.memory_plot, self.stats, self.breakdown_view = memory_plot, stats, breakdown_view
        self.devices: tuple[str, ...] = ()  # by rank; () for an ordinary run
        self.names: tuple[str, ...] = ()  # 'GPU 1', 'rank 1 (cpu)', by rank

    def set_ranks(self, devices: Sequence[str]) -> None:
        """The ranks a run has (their devices, by rank); one or none: the ordinary view (rank UI hidden)."""
        self.devices = tuple(devices) if len(devices) > 1 else ()
        self.names = rank_names(self.devices)
        self.memory_plot.set_ranks(self.devices)
        self.breakdown_view.set_ranks(self.names)
        if not self.devices:
            self.stats.show_rank_speeds("")

    def _ensure(self, devices: Sequence[str]) -> None:
        """Ranks the start did not announce (or announced otherwise) are taken from the readings."""
        if tuple(devices) != self.devices:
            self.set_ranks(devices)

    def show_samples(self, time_s: float, samples: Sequence[RankSample]) -> None:
        """One report's samples (a live run's `StepsReported.ranks`), at rank 0's `time_s`."""
        by_rank = {sample.rank: sample for sample in samples}
        self._ensure([by_rank[r].device if r in by_rank else "unknown" for r in range(max(by_rank) + 1)])
        self.memory_plot.add_rank_samples(time_s, samples)
        self.show_speeds({rank: sample.samples_per_s for rank, sample in by_rank.items()})

    def show_rows(self, devices: Sequence[str], rows: np.ndarray) -> None:
        """Many reports at once (a recorded run's), as `gpu_train_monitor.gui.plots.rank_series.RankLayout(devices)`
        rows."""
        self._ensure(devices)
        self.memory_plot.add_rank_rows(self.devices, rows)

    def show_speeds(self, speeds: Mapping[int, float | None]) -> None:
        """Each rank's images/s (by rank) under the total."""
        if speeds and self.devices:
            self.stats.show_rank_speeds(*speeds_text(self.names, [speeds.get(r) for r in range(max(speeds) + 1)]))
