"""What a run looks like in the window: the loss and memory plots, the live numbers, the memory
breakdown and the log, fed by core events. It changes no state: the window decides what a run does,
this shows what happened, in the sentences of `gpu_train_monitor.events.event_text` (in the user's language:
`gpu_train_monitor.gui.qt.core_text`), the events as a recorded run's window shows them
(`gpu_train_monitor.gui.views.event_display`). A data-parallel run shows every rank: its memory lines, its images/s
under the total, and its memory breakdown (picked by rank).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

from PySide6.QtCore import QObject

from gpu_train_monitor.base.text import Message
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.config.sequences import IMAGES, throughput
from gpu_train_monitor.events import event_text
from gpu_train_monitor.events.events import CacheCleared, OutOfMemory, RunFinished, RunPaused, RunStarted, StepsReported
from gpu_train_monitor.events.status import Status
from gpu_train_monitor.gui.form.text import label
from gpu_train_monitor.gui.plots.loss_plot import LossPlot
from gpu_train_monitor.gui.plots.memory_plot import MemoryPlot
from gpu_train_monitor.gui.qt.core_text import choice_text, core_text
from gpu_train_monitor.gui.qt.redraw import RedrawThrottle
from gpu_train_monitor.gui.views.breakdown_view import BreakdownView
from gpu_train_monitor.gui.views.event_display import EventDisplay
from gpu_train_monitor.gui.views.log_panel import LogPanel
from gpu_train_monitor.gui.views.rank_display import RankDisplay
from gpu_train_monitor.gui.views.retry_marks import RetryMarks
from gpu_train_monitor.gui.views.stats_panel import RateMedian, StatsPanel, planned_epochs
from gpu_train_monitor.gui.views.step_time_view import StepTimeView

REDRAW_INTERVAL_MS = 33  # <= 30 Hz
# memory moves slowly: 5 redraws a second are live enough, and at 10 reports a second that halves the
# memory plot's share of the GUI thread (about 4 ms of CPU a redraw on a 2-core machine)
MEMORY_REDRAW_INTERVAL_S = 0.2


class RunView(QObject):
    """Owns the run's display widgets (the window places them) and the throttle that repaints the plots."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.loss_plot = LossPlot()
        self.memory_plot = MemoryPlot()
        self.stats = StatsPanel()
        self.rates = RateMedian()  # the live run's images/s, as its summary will give it
        self.unit = IMAGES  # its throughput unit: tokens/s (samples/s x seq_len) for a text run
        self.breakdown_view = BreakdownView()
        self.step_time = StepTimeView()  # where each report's step time went, by phase
        self.log = LogPanel()
        self.last_sample: Any = None  # the latest gpu_train_monitor.events.events.MemorySample shown
        # the run shown was another process's (read from the store: a watched script, a data-parallel or remote
        # run): the numbers keep its memory at rest, where the readings are the window's own, not that run's
        self.run_elsewhere = False
        self._oom_logged: str | None = None
        self.events = EventDisplay(self.loss_plot, self.memory_plot, self.breakdown_view, self.log, self.step_time)
        self.clock = time.monotonic  # replaceable in tests
        self._memory_drawn_at = -math.inf
        self.ranks = RankDisplay(self.memory_plot, self.stats, self.breakdown_view)  # a data-parallel run's
        self.retries = RetryMarks(self.memory_plot, self)  # where the allocator retried (fragmentation)
        self.redraw = RedrawThrottle(
            REDRAW_INTERVAL_MS, (self.loss_plot.refresh, self._refresh_memory, self.step_time.refresh), self
        )

    def reset(self, config: RunConfig) -> None:
        """A run is starting: empty plots, numbers and breakdown; log what was asked for (`config` with its
        auto model and device resolved where the window knows them)."""
        self.reset_watched()
        self.loss_plot.val_plot.show()
        self.stats.reset(0, config.epoch_limit)
        self.log.add(core_text(event_text.run_requested(config)))

    def reset_watched(self) -> None:
        """A run is starting whose plan only its start will tell (a watched script): empty plots, numbers and
        breakdown."""
        self._oom_logged = None  # the out of memory logged last: the run's end does not repeat it
        self.run_elsewhere = False  # until a feed from the store says otherwise
        self.loss_plot.clear()
        self.memory_plot.clear()
        self.retries.reset()
        self.stats.reset(0, None)
        self.breakdown_view.clear()
        self.step_time.clear()
        self.ranks.set_ranks(())

    def show(self, event: object, at: float | None = None) -> None:
        """A live event: what only a live run shows (its progress, numbers and end) here, the rest as a recorded
        run's window shows it (`gpu_train_monitor.gui.views.event_display`). `at`: when it was recorded (seconds since
        the epoch), for a run followed through the store (its plots' clock starts at `events.started_at`); None: now."""
        match event:
            case StepsReported():
                self.loss_plot.add_losses(event.first_step, event.losses)
                self.rates.add(event.samples_per_s)
                speed = self.unit.of(self.rates.median)
                self.stats.update_progress(event.step, event.epoch, speed, event.eta_s, event.total_steps)
                self.show_sample(event.memory)
                if event.ranks:  # a data-parallel run: every rank's sample, at rank 0's time
                    self.ranks.show_samples(event.memory.time_s, event.ranks)
                self.events.show_event(event, at)  # its phases, as a recorded run's window shows them
            case RunStarted():  # a run of max_steps: its epochs counted from the steps ("Epoch 3 / 10")
                self.rates.clear()
                self.unit = throughput(event.config)
                self.stats.set_unit(self.unit.unit)
                self.stats.reset(
                    event.total_steps, planned_epochs(event.epochs, event.total_steps, event.steps_per_epoch)
                )
                self.ranks.set_ranks(event.rank_devices if event.world_size > 1 else ())
                self.loss_plot.val_plot.setVisible(event.steps_per_epoch > 0)  # a watched script: no validation
                self.events.show_event(event, at)
            case RunPaused():  # no time left counts down while paused
                self.events.show_event(event, at)
                self.stats.values["eta"].setText(self.tr("paused"))
            case CacheCleared():
                self.show_cache_cleared(event, at)
            case RunFinished():
                failed = not Status(event.status).ended_well
                if event.summary is not None:  # its own figures: the same as its log line and its Runs row
                    self.memory_plot.hold_peak(event.summary.peak_allocated_bytes)  # held at rest too
                    self.stats.show_end(self.unit.of(event.summary.samples_per_s), event.summary.peak_allocated_bytes)
                self.log.add(core_text(event_text.run_finished(self._said_once(event))), "error" if failed else "info")
                if failed and (event.status != "failed" or not event.user_error):  # a bad option is no event
                    self.events.mark_status(event.status)
            case OutOfMemory():
                self._oom_logged = event.message  # the run's end does not say it again
                self.events.show_event(event, at)
            case _:
                self.events.show_event(event, at)

    def _said_once(self, event: RunFinished) -> RunFinished:
        """A run stopped by an out of memory already logged: its end says only what to try (the failure was
        logged twice), and in the window's words (its field, not the CLI's --on-oom)."""
        message = event.message
        if (
            event.status != "oom"
            or not isinstance(message, Message)
            or message.template != "{problem}; {hint}"
            or str(message.params.get("problem")) != str(self._oom_logged)
        ):
            return event
        hint = message.params.get("hint")
        if isinstance(hint, Message) and hint.template == "try a smaller batch size or --on-oom shrink":
            hint = self.tr("try a smaller batch size, or set {setting} to {shrink}").format(
                setting=label("on_oom"), shrink=choice_text("on_oom", "shrink")
            )
        return dataclasses.replace(event, message=hint)

    def show_crash(self, message: str) -> None:
        """An exception escaped the session: its first line, then the traceback, in the log. A message of one line
        is a UserError's (a machine that cannot be reached, what another machine refused): said as it is, no crash."""
        lines = message.strip().splitlines()
        if len(lines) == 1:
            self.log.add(self.tr("could not run: {error}").format(error=lines[0]), "error")
            return
        self.log.add(self.tr("the run crashed: {error}").format(error=lines[0] if lines else ""), "error")
        for line in lines[1:]:
            self.log.add(line, "error")

    def show_cache_cleared(self, event: CacheCleared, at: float | None = None) -> None:
        self.memory_plot.add_sample(event.memory)
        self.events.show_event(event, at)

    def show_sample(self, sample: Any, at_rest: bool = False) -> None:
        """A memory reading (from a report, or the idle poll `at_rest`): plotted and shown as the live numbers,
        except a reading at rest after a run of another process: the numbers beside that run's steps stay its own."""
        self.last_sample = sample
        self.memory_plot.add_sample(sample)
        self.retries.see(sample)
        if not (at_rest and self.run_elsewhere):
            self.stats.update_memory(sample.allocated_bytes, self.memory_plot.peak_of(sample))

    def stop(self) -> None:
        self.redraw.stop()

    def _refresh_memory(self) -> bool:
        """The memory plot's redraw, at most every MEMORY_REDRAW_INTERVAL_S; samples wait, none is lost."""
        now = self.clock()
        if now - self._memory_drawn_at < MEMORY_REDRAW_INTERVAL_S or not self.memory_plot.refresh():
            return False
        self._memory_drawn_at = now
        return True
