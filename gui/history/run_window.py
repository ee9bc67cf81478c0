"""A recorded run in a window of its own: its loss, memory, images/s, memory breakdown, events and config,
read from the run store; a live run (in a terminal, under tmux, in a script) is followed as it trains.

The plots are the live window's own widgets (`LossPlot`, `MemoryPlot`, `StatsPanel`, `BreakdownView`,
`LogPanel`), fed from the store's series instead of a session's events: losses against step, memory
against seconds since the run's start, log lines stamped with the time they were recorded. The run so far
is read in the background (`gpu_train_monitor.gui.history.loader`: a long run takes seconds); a run still training is
then polled every `POLL_INTERVAL_MS` for what was recorded since (`gpu_train_monitor.gui.history.feed.RunFeed`) until it
ends: completed, stopped, or interrupted once its process is gone. It is read-only: it is controlled where it
runs, and the header says where that is. A data-parallel run shows every rank as the live window does
(`gpu_train_monitor.gui.views.rank_display`): from its rank reports, its memory lines and images/s, and a breakdown per
rank.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from gpu_train_monitor.events.events import CacheCleared, MemoryBreakdown, MemorySample
from gpu_train_monitor.events.status import Status
from gpu_train_monitor.gui.history.control_row import RunControlRow
from gpu_train_monitor.gui.history.feed import (
    FeedUpdate,
    RunFeed,
    SeriesArrays,
    StoreLink,
    contiguous_runs,
    rebuild_event,
    with_samples,
)
from gpu_train_monitor.gui.history.loader import LoadedRun, RunLoader
from gpu_train_monitor.gui.history.outage import ConnectionOutage
from gpu_train_monitor.gui.history.row_text import script_text, state_text
from gpu_train_monitor.gui.history.run_window_layout import header_label, lay_out, problem_label
from gpu_train_monitor.gui.history.run_window_text import clears_cache, end_line, header_html, shown_summary, titled
from gpu_train_monitor.gui.i18n.status_text import status_colour, status_text
from gpu_train_monitor.gui.plots.loss_plot import LOSS_CAPACITY, LossPlot
from gpu_train_monitor.gui.plots.memory_plot import MemoryPlot
from gpu_train_monitor.gui.plots.rank_series import last_speeds
from gpu_train_monitor.gui.plots.rate_plot import RatePlot
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.core_text import error_text
from gpu_train_monitor.gui.qt.redraw import RedrawThrottle
from gpu_train_monitor.gui.views.breakdown_view import BreakdownView
from gpu_train_monitor.gui.views.event_display import EventDisplay, config_line, fields_lines, plain_event_line
from gpu_train_monitor.gui.views.log_panel import LogPanel
from gpu_train_monitor.gui.views.rank_display import RankDisplay
from gpu_train_monitor.gui.views.stats_panel import StatsPanel, median_rate
from gpu_train_monitor.gui.views.step_time_view import StepTimeView
from gpu_train_monitor.store.run_store import RunNotFound, RunRow, StoreError

POLL_INTERVAL_MS = 400  # a live run reports ~10 times a second and commits each report: 2.5 looks a second
RETRY_INTERVAL_MS = 3000  # after a failed read (a locked or damaged store)
REDRAW_INTERVAL_MS = 50  # one plot per tick, each only when it changed and can be seen


class StoredRunView(QWidget):
    """One recorded run, opened from the history (`gpu_train_monitor.gui.history.panel`); `closed` says when it was
    closed."""

    closed = Signal(int)  # the run's id

    def __init__(self, link: StoreLink, run_id: int, row: RunRow | None = None, parent: QWidget | None = None) -> None:
        """`row` (the history's copy) sizes the loss plot's buffer to the run; the rest is read by `poll`."""
        super().__init__(parent, Qt.WindowType.Window)
        self.setAttribute(Qt.WidgetAttribute.WA_QuitOnClose, False)  # closing the main window quits the app
        self.link, self.run_id = link, run_id
        self.feed = RunFeed(run_id)
        self.row: RunRow | None = None
        self._epoch = 1
        self._ended_logged = False
        self._breakdowns: dict[int, MemoryBreakdown] = {}  # each rank's latest (rank 0 alone: an ordinary run)
        self._last_control = ""  # RunPaused or RunResumed, whichever was recorded last
        self.controls: Any = None  # what steers a run this window launched (`controlled_by`); None: read-only
        self.script = ""  # a watched script's name and folder ("train.py (~/proj)"), from its config
        self.outage = ConnectionOutage()  # the connection to a copied run's machine (`connection_dropped`)
        self.setWindowTitle(self.tr("Run #{run_id} — GPU Training Monitor").format(run_id=run_id))
        self.resize(1100, 780)
        self._build(row)
        for keys in ("Esc", "Ctrl+W"):  # a window of its own among many: closed as a dialog or a tab is
            QShortcut(QKeySequence(keys), self).activated.connect(self.close)

        self.loader = RunLoader(link.path, self.feed, self)  # the first read, however long, off the GUI thread
        self.loader.loaded.connect(self._on_loaded)
        self.loader.failed.connect(self._on_load_failed)
        self.poll_timer = QTimer(self)
        self.poll_timer.setInterval(POLL_INTERVAL_MS)
        self.poll_timer.timeout.connect(self.poll)
        self.redraw = RedrawThrottle(
            REDRAW_INTERVAL_MS, (self.loss_plot.refresh, self.memory_plot.refresh, self.rate_view.refresh), self
        )
        self.header.setText(
            self.tr("Reading run {run_id} from {path}…").format(run_id=run_id, path=html.escape(str(link.path)))
        )
        self.poll_timer.start()  # stopped once the run is read and has ended
        self.poll()

    # ---- layout ----------------------------------------------------------------------------------
    def _build(self, row: RunRow | None) -> None:
        steps = max(row.total_steps, row.steps) if row is not None else LOSS_CAPACITY // 2
        # room to grow (an out-of-memory shrink adds steps)
        self.loss_plot = LossPlot(capacity=min(LOSS_CAPACITY, max(2 * steps, 4096)))
        self.memory_plot = MemoryPlot()
        self.stats = StatsPanel()
        self.breakdown_view = BreakdownView()
        self.log = LogPanel()
        self.ranks = RankDisplay(self.memory_plot, self.stats, self.breakdown_view)
        self.events = EventDisplay(self.loss_plot, self.memory_plot, self.breakdown_view, self.log)  # as live
        self.log.setPlaceholderText(
            self.tr("The run's start, epochs, cache clears, out-of-memory events and log lines.")
        )
        self.rate_view = RatePlot()
        self.rate_plot, self.rates = self.rate_view.plot, self.rate_view.data  # the widget; step, images/s
        self.step_time = StepTimeView()  # each stored report's step time, by phase, as the live window shows it
        self.config_text = QPlainTextEdit()
        self.config_text.setReadOnly(True)

        self.header, self.problem = header_label(), problem_label()
        self.control_row = RunControlRow()  # shown only for a run this window launched (`controlled_by`)
        self.control_row.failed.connect(self._show_problem)
        self.control_buttons = self.control_row.buttons
        self.tabs = lay_out(self)

    def controlled_by(self, controls: Any) -> None:
        """This window launched the run (a data-parallel run's processes): its Stop, Pause and Clear cache reach
        it through `controls` (`request_stop()`, `toggle_pause()`, `request_cache_clear()`) instead of
        'read-only here'."""
        self.controls = self.control_row.controls = controls
        if self.row is not None:
            self._show_row(self.row)

    # ---- reading the store -----------------------------------------------------------------------
    @property
    def following(self) -> bool:
        """Whether the run may still record more (it is running, or its machine's connection is down): the view
        keeps polling it."""
        return self.row is not None and (self.row.status == "running" or self.outage.holds(self.row))

    def connection_dropped(self, host: str | None) -> None:
        """The window's connection to `host` dropped and is reconnecting (None: no connection is down): a run
        copied from that machine says "reconnecting", and an `interrupted` the store marks meanwhile is not taken
        for its end."""
        if self.outage.set_host(host) and self.row is not None:
            self._show_row(self.row)
            if self.following and not self.poll_timer.isActive():
                self.poll_timer.start()

    @property
    def loading(self) -> bool:
        """Whether the run's history is still being read (in the background)."""
        return self.row is None and self.poll_timer.isActive()

    @Slot()
    def poll(self) -> None:
        """Read what was recorded since the last poll and show it; a store problem is shown, never raised.
        The first read (the whole run so far) goes to the background loader; later ones are a few rows."""
        if self.row is None:
            if not self.loader.running:
                self.loader.start()
            return
        try:
            store = self.link.store()
            if store is None:
                raise StoreError(self.tr("the run store {path} is not there any more").format(path=self.link.path))
            update = self.feed.poll(store)
            if update.restarted:  # resumed from a checkpoint: shown again from the start
                self._begin(update.row, store.started(self.run_id), store.config(self.run_id))
            summary = store.summary(self.run_id) if update.finished and not self._ended_logged else None
        except RunNotFound:
            self._gone()
            return
        except StoreError as exc:
            self._show_problem(error_text(exc))  # kept polling: a store locked for a moment is readable again later
            return
        self.problem.hide()
        self._apply(update, summary)
        if not self.following:
            self.poll_timer.stop()

    @Slot(object)
    def _on_loaded(self, loaded: LoadedRun | None) -> None:
        if loaded is None:
            self._gone()
            return
        self.problem.hide()
        self.poll_timer.setInterval(POLL_INTERVAL_MS)
        self._begin(loaded.update.row, loaded.started, loaded.config)
        self._apply(loaded.update, loaded.summary, loaded.arrays)
        if not self.following:  # a finished run is read once
            self.poll_timer.stop()

    @Slot(str)
    def _on_load_failed(self, message: str) -> None:
        self._show_problem(message)
        self.poll_timer.setInterval(RETRY_INTERVAL_MS)  # tried again, less often

    def _gone(self) -> None:
        self._show_problem(
            self.tr("run {run_id} is no longer in the store (it was deleted)").format(run_id=self.run_id)
        )
        self.poll_timer.stop()

    def _begin(self, row: RunRow, started: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        """The run (again, after a resume): empty views, its plan and config."""
        self.events.started_at = row.started_at
        self._ended_logged = False
        self._breakdowns = {}
        self._last_control = ""
        self.loss_plot.clear()
        self.memory_plot.clear()
        self.memory_plot.seconds(0.0)  # the x axis: seconds since the run's start, as the reports' elapsed_s
        self.breakdown_view.clear()
        self.breakdown_view.set_device_kind(row.device.split(":")[0])  # the CPU's memory is the process's
        self._name_breakdown_tab()
        self.log.clear()
        self.rate_view.clear()
        self.rate_view.set_unit(row.throughput_unit, row.tokens_per_sample)  # tokens/s for a text run
        self.stats.set_unit(row.throughput_unit)
        self.step_time.clear()
        no_epochs = started.get("steps_per_epoch", 1) == 0  # a watched script's own loop
        self.stats.reset(int(started.get("total_steps", row.total_steps)), 0 if no_epochs else started.get("epochs"))
        self.loss_plot.val_plot.setVisible(not no_epochs)  # nor any validation
        world_size = int(started.get("world_size") or row.world_size)
        self.ranks.set_ranks(tuple(started.get("rank_devices") or ()) if world_size > 1 else ())
        event = rebuild_event("RunStarted", started, 0.0)
        if event is not None:  # its reading, its start and its config, as the live log has them
            self.events.show_event(event, row.started_at)
        else:  # a start this version cannot read: its config still
            self.log.add(config_line(config), at=row.started_at)
        self.config_text.setPlainText(fields_lines(config))
        self.script = script_text(row, config)

    def _apply(self, update: FeedUpdate, summary: Mapping[str, Any] | None, arrays: SeriesArrays | None = None) -> None:
        """Show what a read found (its series as arrays, when the loader made them already)."""
        row = update.row
        self.row = row
        arrays = arrays if arrays is not None else SeriesArrays.of(update)
        for part in contiguous_runs(arrays.steps):
            self.loss_plot.add_losses(int(arrays.steps[part.start]), arrays.losses[part])
        if update.steps.epochs:
            self._epoch = update.steps.epochs[-1]
        samples = (self._show_event(event.kind, event.data, event.at) for event in update.events)
        memory = with_samples(arrays.memory, [sample for sample in samples if sample is not None])
        if len(memory):  # a cache clear's reading goes between two reports'
            self.memory_plot.add_rows(memory)
        if len(arrays.rank_memory):
            self.ranks.show_rows(arrays.rank_devices, arrays.rank_memory)
        if update.reports:
            self.rate_view.extend(arrays.rates)
            self.step_time.add_rows(update.reports)
            last = update.reports[-1]
            self.stats.update_progress(
                last.step,
                self._epoch,
                median_rate(self.rate_view.data.column(1)),
                last.eta_s if self.following else None,
                last.total_steps,
            )
            self.stats.update_memory(last.allocated_bytes, last.peak_allocated_bytes)
        if update.rank_reports:
            self.ranks.show_speeds(last_speeds(update.rank_reports))
        for breakdown in self._breakdowns.values():  # each rank's latest only: one a second were recorded
            if breakdown is not self.breakdown_view.by_rank.get(breakdown.rank):
                self.breakdown_view.show_breakdown(breakdown)
        if update.finished and not self._ended_logged and not self.outage.holds(row):
            self._show_end(row, summary)
        self._show_row(row)

    def _show_event(self, kind: str, data: Mapping[str, Any], at: float) -> MemorySample | None:
        """Log an event and mark it on the plots as the live window does; returns the memory reading it carries
        (a cache clear's, plotted among the reports')."""
        if kind in ("RunPaused", "RunResumed"):
            self._last_control = kind
        event = rebuild_event(kind, data, at - self.events.started_at)
        if isinstance(event, MemoryBreakdown):  # shown once the read is: each rank's latest only
            self._breakdowns[event.rank] = event
        elif not self.events.show_event(event, at):  # a kind or fields this version does not know
            self.log.add(plain_event_line(kind, data), at=at)
        return event.memory if isinstance(event, CacheCleared) else None

    def _show_end(self, row: RunRow, summary: Mapping[str, Any] | None) -> None:
        """How the run ended, once: in the log (as the live window words it) and, for a failure, on the plot."""
        self._ended_logged = True
        at = row.finished_at if row.finished_at is not None else row.heartbeat_at
        text, level = end_line(row, summary)
        self.log.add(text, level, at)
        status = Status.of(row.status)
        if status is not None and (status.failed or status is Status.INTERRUPTED):
            self.events.mark_status(row.status, at, error=status.failed)
        if summary is not None:
            shown = shown_summary(summary, status_text(str(summary.get("status", row.status))))
            self.config_text.appendPlainText("\n" + self.tr("summary:") + "\n" + fields_lines(shown))
        # the summary's median; without one (interrupted) the store keeps the last report's: the reports' median
        speed = row.speed if summary is not None else median_rate(self.rate_view.data.column(1))
        self.stats.update_progress(row.steps, self._epoch, speed, None, row.total_steps)
        self.stats.show_end(None, row.peak_allocated_bytes)  # the Runs table's peak (readings after the last report)
        ranks = (summary or {}).get("ranks") or ()
        if ranks:  # each rank's images/s as the summary's total is measured (median after warm-up)
            self.ranks.show_speeds({int(rank["rank"]): rank.get("samples_per_s") for rank in ranks})

    def _show_row(self, row: RunRow) -> None:
        """The header and the state: what the run is, whether it is live, and where it is controlled."""
        paused = row.live and self._last_control == "RunPaused"  # paused where it runs
        shown = self.tr("paused") if paused else state_text(row)
        colour = status_colour(row.status, row.live)
        if self.outage.holds(row):  # nothing comes from that machine for now: no news is not its end
            shown, colour = self.tr("reconnecting to {host}…").format(host=row.origin), palette.WARNING
        self.stats.state_label.setText(f"<span style='color:{colour}'>● {html.escape(shown)}</span>")
        self.header.setText(header_html(row, shown, colour, launched=self.controls is not None, script=self.script))
        self.control_row.show_for(row.live, paused, clears_cache(row))
        self.setWindowTitle(titled(row, self.script, shown))

    def show_again(self) -> None:
        """The header, state, title and breakdown said again (after a language change)."""
        if self.row is not None:
            self._show_row(self.row)
        self.breakdown_view.show_again()
        self.step_time.show_again()
        self._name_breakdown_tab()

    def _name_breakdown_tab(self) -> None:
        """The breakdown's tab named as the main window names it, for the run's kind of device."""
        self.tabs.setTabText(self.tabs.indexOf(self.breakdown_view), self.breakdown_view.tab_title())

    def _show_problem(self, text: str) -> None:
        self.problem.setText(text)
        self.problem.show()

    # ---- drawing and closing ---------------------------------------------------------------------
    def draw_now(self) -> None:
        """Every plot drawn up to date (what a test or a saved image wants)."""
        self.loss_plot.refresh()
        self.memory_plot.refresh()
        self.rate_view.refresh()

    def stop(self) -> None:
        """Stop polling and drawing, and a read under way (interrupted)."""
        self.poll_timer.stop()
        self.redraw.stop()
        self.loader.shutdown()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.stop()
        self.closed.emit(self.run_id)
        event.accept()
