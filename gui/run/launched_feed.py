"""The main window's plots and numbers for a data-parallel run it launched. Its ranks train in other processes,
so no session's events reach the window: what rank 0 records in the run store is read back (as a followed
run's window reads it, `gpu_train_monitor.gui.history.feed`) and shown in the window's own `RunView`, as the events of a
run in the window's thread would be: the steps and losses, images/s, time left, memory, epochs and cache clears.
How the launch starts and ends (its log lines, the window's state) stays `gpu_train_monitor.gui.run.launched_run`'s."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from gpu_train_monitor.events.events import OutOfMemory
from gpu_train_monitor.gui.history.feed import (
    FeedUpdate,
    RunFeed,
    SeriesArrays,
    StoreLink,
    contiguous_runs,
    rebuild_event,
)
from gpu_train_monitor.gui.views.run_view import RunView
from gpu_train_monitor.store.run_store import RunNotFound, StoreError

POLL_INTERVAL_MS = 400  # as a followed run's window
SHOWN_EVENTS = ("EpochEnded", "CacheCleared", "MemoryBreakdown", "StepPredicted", "OutOfMemory", "LogMessage")


class LaunchedFeed(QObject):
    """Shows run `run_id` of the store behind `link` in `view` while it trains (`follow`, then `finish`)."""

    out_of_memory = Signal(object)  # the run recorded an OutOfMemory (the window's banner offers what to do)

    def __init__(self, view: RunView, link: StoreLink, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.view, self.link = view, link
        self.feed: RunFeed | None = None
        self._started = False
        self._epoch = 1
        self._started_at = 0.0
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_INTERVAL_MS)
        self.timer.timeout.connect(self.poll)

    def follow(self, run_id: int) -> None:
        self.feed, self._started, self._epoch = RunFeed(run_id), False, 1
        self.timer.start()
        self.poll()

    def finish(self) -> None:
        """The run's processes are gone: what they recorded last, then no more polling."""
        self.timer.stop()
        self.poll()
        self.feed = None

    @Slot()
    def poll(self) -> None:
        """What was recorded since the last poll, shown; a store problem only waits for the next poll."""
        if self.feed is None:
            return
        try:
            store = self.link.store()
            if store is None:
                return
            if not self._started:
                started = store.started(self.feed.run_id)
            update = self.feed.poll(store)
        except (StoreError, RunNotFound):
            return
        if not self._started:
            self._begin(update, started)
        self._show(update)

    def _begin(self, update: FeedUpdate, started: dict) -> None:
        self._started, self._started_at = True, update.row.started_at
        self.view.run_elsewhere = True  # its processes' memory: the window's own readings at rest are not its
        self.view.memory_plot.clear()
        self.view.memory_plot.seconds(0.0)  # x: seconds since the run's start, as the reports' times
        self.view.events.started_at = update.row.started_at  # its marks (an out of memory) on that clock
        event = rebuild_event("RunStarted", started, 0.0)
        if event is not None:
            # the plan ("Step 0 / 200"), the ranks, the first reading, the log's start
            self.view.show(event, update.row.started_at)

    def _show(self, update: FeedUpdate) -> None:
        view = self.view
        arrays = SeriesArrays.of(update)
        for part in contiguous_runs(arrays.steps):
            view.loss_plot.add_losses(int(arrays.steps[part.start]), arrays.losses[part])
        if update.steps.epochs:
            self._epoch = update.steps.epochs[-1]
        if len(arrays.memory):
            view.memory_plot.add_rows(arrays.memory)
        if len(arrays.rank_memory):
            view.ranks.show_rows(arrays.rank_devices, arrays.rank_memory)
        for report in update.reports:
            view.rates.add(report.samples_per_s)
        if update.reports:
            last = update.reports[-1]
            live = update.row.status == "running"
            view.stats.update_progress(
                last.step, self._epoch, view.unit.of(view.rates.median), last.eta_s if live else None, last.total_steps
            )
            view.stats.update_memory(last.allocated_bytes, last.peak_allocated_bytes)
        for row in update.events:
            if row.kind in SHOWN_EVENTS:
                event = rebuild_event(row.kind, row.data, row.at - self._started_at)
                if event is not None:
                    view.show(event, row.at)
                if isinstance(event, OutOfMemory):
                    self.out_of_memory.emit(event)
