"""What a run looks like in the window: the loss and memory plots, the live numbers, the memory
breakdown and the log, fed by core events. It changes no state: the window decides what a run does,
this shows what happened, in the sentences of `core.run.event_text` (in the user's language: `gui.qt.core_text`). A data-parallel run shows every rank:
its memory lines, its images/s under the total, and its memory breakdown (picked by rank).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Slot

from core.base.text import Message
from core.config.run_config import RunConfig
from core.run import event_text
from core.run.events import (
    CacheCleared,
    CheckpointSaved,
    EpochEnded,
    LogMessage,
    MemoryBreakdown,
    OutOfMemory,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
    SnapshotSaved,
    StepsReported,
)
from core.run.status import Status
from gui.form.text import LABELS, choice_text, label
from gui.history.run_window_text import plain_event_line
from gui.i18n.status_text import status_text
from gui.plots.loss_plot import LossPlot
from gui.plots.memory_plot import MemoryPlot
from gui.qt.core_text import core_text
from gui.qt.locale_format import integer
from gui.views.breakdown_view import BreakdownView
from gui.views.log_panel import LogPanel
from gui.views.rank_display import RankDisplay
from gui.views.stats_panel import RateMedian, StatsPanel

REDRAW_INTERVAL_MS = 33  # <= 30 Hz
# memory moves slowly: 5 redraws a second are live enough, and at 10 reports a second that halves the
# memory plot's share of the GUI thread (about 4 ms of CPU a redraw on a 2-core machine)
MEMORY_REDRAW_INTERVAL_S = 0.2


def shown_value(value: Any) -> str:
    """A recorded value for people: yes, no and 'not set' in the user's language (JSON's true, false and
    null would be English); nested values as compact JSON with the same words."""
    if value is None:
        return QCoreApplication.translate("run_view", "not set")
    if isinstance(value, bool):
        return QCoreApplication.translate("run_view", "yes") if value else QCoreApplication.translate(
            "run_view", "no")
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{name}: {_config_value(name, item)}" for name, item in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(shown_value(item) for item in value) + "]"
    return str(value)


def config_text(config: Mapping[str, Any]) -> str:
    """Every field of a run's config as `label=value`, for the log: in the form's words, names and values
    alike (batch size, off, yes in the user's language); values that are names (resnet18, cuda:0) as they are."""
    return QCoreApplication.translate("run_view", ", ", "between the fields of the logged config").join(
        f"{label(name) if name in LABELS else name}={_config_value(name, value)}" for name, value in config.items())


def _config_value(field: str, value: Any) -> str:
    """A config value as the form shows it: a word choice in the user's language (off, synthetic), a name as
    it is, yes/no/not set translated."""
    return choice_text(field, value) if isinstance(value, str) else shown_value(value)


def fields_lines(values: Mapping[str, Any]) -> str:
    """One `name = value` line per field, sorted by name (a recorded config or summary, to read whole)."""
    return "\n".join(f"{name} = {_config_value(name, values[name])}" for name in sorted(values))


class RunView(QObject):
    """Owns the run's display widgets (the window places them) and the timer that repaints the plots."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.loss_plot = LossPlot()
        self.memory_plot = MemoryPlot()
        self.stats = StatsPanel()
        self.rates = RateMedian()  # the live run's images/s, as its summary will give it
        self.breakdown_view = BreakdownView()
        self.log = LogPanel()
        self.last_sample: Any = None  # the latest core.run.events.MemorySample shown
        self._oom_logged: str | None = None
        self.redraw_timer = QTimer(self)
        self.redraw_timer.setInterval(REDRAW_INTERVAL_MS)
        self.redraw_timer.timeout.connect(self._on_redraw_timer)
        self._redraw_loss_first = True
        self.clock = time.monotonic  # replaceable in tests
        self._memory_drawn_at = -math.inf
        self.ranks = RankDisplay(self.memory_plot, self.stats, self.breakdown_view)  # a data-parallel run's
        self.redraw_timer.start()

    def reset(self, config: RunConfig) -> None:
        """A run is starting: empty plots, numbers and breakdown; log what was asked for (`config` with its
        auto model and device resolved where the window knows them)."""
        self._oom_logged = None  # the out of memory logged last: the run's end does not repeat it
        self.loss_plot.clear()
        self.memory_plot.clear()
        self.stats.reset(0, config.epoch_limit)
        self.log.add(core_text(event_text.run_requested(config)))
        self.breakdown_view.clear()
        self.ranks.set_ranks(())

    def show(self, event: object) -> None:
        match event:
            case StepsReported():
                self.loss_plot.add_losses(event.first_step, event.losses)
                self.rates.add(event.samples_per_s)
                self.stats.update_progress(event.step, event.epoch, self.rates.median, event.eta_s,
                                           event.total_steps)
                self.show_sample(event.memory)
                if event.ranks:  # a data-parallel run: every rank's sample, at rank 0's time
                    self.ranks.show_samples(event.memory.time_s, event.ranks)
            case RunStarted():  # a run of max_steps: its epochs counted from the steps ("Epoch 3 / 10")
                self.rates.clear()
                self.stats.reset(event.total_steps, event.epochs or math.ceil(event.total_steps /
                                                                              max(event.steps_per_epoch, 1)))
                self.ranks.set_ranks(event.rank_devices if event.world_size > 1 else ())
                self.memory_plot.add_sample(event.memory)
                self.log.add(core_text(event_text.run_started(event)))
                self.log.add(self.tr("config: {config}").format(config=config_text(event.config)))
            case EpochEnded():
                self.loss_plot.add_epoch_end(event.epoch, event.step, event.val_accuracy, event.complete)
                self.log.add(core_text(event_text.epoch_ended(event)))
            case RunPaused() | RunResumed():
                self.log.add(plain_event_line(type(event).__name__, {"step": integer(event.step)}))
                if isinstance(event, RunPaused):  # no time left counts down while paused
                    self.stats.values["eta"].setText(self.tr("paused"))
            case CacheCleared():
                self.show_cache_cleared(event)
            case MemoryBreakdown():
                self.breakdown_view.show_breakdown(event)
            case SnapshotSaved():
                self.log.add(core_text(event_text.snapshot_saved(event)))
            case CheckpointSaved():
                self.log.add(core_text(event_text.checkpoint_saved(event)))
            case OutOfMemory():
                self._oom_logged = event.message
                self.memory_plot.add_marker(time.monotonic(), status_text("oom"), error=True)
                self.log.add(core_text(event_text.out_of_memory(event)),
                             "error" if event.action == "stop" else "warning")
            case LogMessage():
                self.log.add(core_text(event.text), event.level)
            case RunFinished():
                failed = not Status(event.status).ended_well
                if event.summary is not None:  # its own figures: the same as its log line and its Runs row
                    self.memory_plot.hold_peak(event.summary.peak_allocated_bytes)  # held at rest too
                    self.stats.show_end(event.summary.samples_per_s, event.summary.peak_allocated_bytes)
                self.log.add(core_text(event_text.run_finished(self._said_once(event))), "error" if failed else "info")
                if failed and (event.status != "failed" or not event.user_error):  # a bad option is no event
                    self.memory_plot.add_marker(time.monotonic(), status_text(event.status), error=True)

    def _said_once(self, event: RunFinished) -> RunFinished:
        """A run stopped by an out of memory already logged: its end says only what to try (the failure was
        logged twice), and in the window's words (its field, not the CLI's --on-oom)."""
        message = event.message
        if (event.status != "oom" or not isinstance(message, Message) or message.template != "{problem}; {hint}"
                or str(message.params.get("problem")) != str(self._oom_logged)):
            return event
        hint = message.params.get("hint")
        if isinstance(hint, Message) and hint.template == "try a smaller batch size or --on-oom shrink":
            hint = self.tr("try a smaller batch size, or set {setting} to {shrink}").format(
                setting=label("on_oom"), shrink=choice_text("on_oom", "shrink"))
        return dataclasses.replace(event, message=hint)

    def show_crash(self, message: str) -> None:
        """An exception escaped the session: its first line, then the traceback, in the log."""
        lines = message.strip().splitlines()
        self.log.add(self.tr("the run crashed: {error}").format(error=lines[0] if lines else ""), "error")
        for line in lines[1:]:
            self.log.add(line, "error")

    def show_cache_cleared(self, event: CacheCleared) -> None:
        self.memory_plot.add_sample(event.memory)
        self.memory_plot.add_marker(event.memory.time_s, core_text(event_text.cache_cleared_mark(event)))
        self.log.add(core_text(event_text.cache_cleared(event)))

    def show_sample(self, sample: Any) -> None:
        """A memory reading (from a report or the idle poll): plotted and shown as the live numbers."""
        self.last_sample = sample
        self.memory_plot.add_sample(sample)
        self.stats.update_memory(sample.allocated_bytes, self.memory_plot.peak_of(sample))

    def stop(self) -> None:
        self.redraw_timer.stop()

    @Slot()
    def _on_redraw_timer(self) -> None:
        # At most one plot per tick: each repaint costs a few ms of CPU, and two in the same event-loop
        # pass doubled the GUI's worst-case latency (tests/benchmarks/gui_latency.py).
        first, second = ((self.loss_plot.refresh, self._refresh_memory) if self._redraw_loss_first
                         else (self._refresh_memory, self.loss_plot.refresh))
        if not first():
            second()
        self._redraw_loss_first = not self._redraw_loss_first

    def _refresh_memory(self) -> bool:
        """The memory plot's redraw, at most every MEMORY_REDRAW_INTERVAL_S; samples wait, none is lost."""
        now = self.clock()
        if now - self._memory_drawn_at < MEMORY_REDRAW_INTERVAL_S or not self.memory_plot.refresh():
            return False
        self._memory_drawn_at = now
        return True
