"""The comparison's race: loss against seconds since each run's start and against step (one colour per
run), images/s as bars with their spread (`gpu_train_monitor.gui.compare.rate_bars`), each run's status, and the
headline with the loss check.

Runs train one after another, so on the time axis every run starts at 0: the faster one's curve reaches
a given loss further left. Data goes into ring buffers as events arrive; a
`gpu_train_monitor.gui.qt.redraw.RedrawThrottle` redraws at most one plot per tick, only what changed, and nothing while
the view is hidden (it catches up when shown). The plots are `gpu_train_monitor.gui.plots.live_plot`'s: auto-range with
headroom and axes settled in the timer's event, curves peak-decimated to the plot's width (to the visible part once
zoomed). The bars show the live median of each run's reports after its first (warm-up, as the summary does)
with their 10th..90th percentiles, then the result's own figures once the comparison has concluded.
Each run's line of text is `gpu_train_monitor.gui.compare.race`'s; everything is in the user's language.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Slot
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from gpu_train_monitor.compare.result import ComparisonResult
from gpu_train_monitor.events.events import RunFinished, RunStarted, StepsReported
from gpu_train_monitor.gui.compare.phase_split import PhaseSplit
from gpu_train_monitor.gui.compare.race import Race, contender_labels, not_run_reason, race_line, race_rate
from gpu_train_monitor.gui.compare.rate_bars import RateBars
from gpu_train_monitor.gui.plots.live_plot import decimated_for, is_shown, legend_above, live_plot_widget, set_curves
from gpu_train_monitor.gui.plots.ring_buffer import RingBuffer
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.core_text import core_text
from gpu_train_monitor.gui.qt.redraw import RedrawThrottle

REDRAW_INTERVAL_MS = 50  # one plot per tick: each of the three redraws at most ~7 times a second
CAPACITY = 250_000  # steps kept per run (a comparison's runs share max_steps; the default is 60)
COLOURS = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40))  # one per run, up to 4
PARTS = ("time", "step", "bars")


def _hex(colour: tuple[int, int, int]) -> str:
    return "#%02x%02x%02x" % colour


class CompareView(QWidget):
    """Shows one comparison at a time; the window feeds it `begin`, `add` per run event, and `finish`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.races: list[Race] = []
        self.result: ComparisonResult | None = None
        self.steps = 0
        self._dirty: set[str] = set()
        self._text_dirty = False
        # stopped while hidden (showEvent wakes it) and once nothing is left to draw: no ticks at rest
        self.redraw = RedrawThrottle(
            REDRAW_INTERVAL_MS,
            [partial(self._draw_part, part) for part in PARTS],
            self,
            idle=lambda: not is_shown(self) or not (self._dirty or self._text_dirty),
        )

        self.header = QLabel(self.tr("No comparison yet: choose one from the Compare menu under the settings."))
        self.header.setObjectName("compareHeader")
        self.header.setWordWrap(True)
        self.time_plot = self._plot(
            self.tr("Loss against time"), self.tr("time since the run's start"), "s", self.tr("loss")
        )
        self.time_legend = legend_above(self.time_plot.getPlotItem(), len(COLOURS))  # over no curve
        self.step_plot = self._plot(self.tr("Loss against step"), self.tr("step"), None, self.tr("loss"))
        for plot, part in ((self.time_plot, "time"), (self.step_plot, "step")):  # zoomed: decimate what shows
            plot.getPlotItem().getViewBox().sigXRangeChanged.connect(
                self._on_time_range_changed if part == "time" else self._on_step_range_changed
            )
        rate_plot = self._plot(self.tr("Images/s"), self.tr("run"), None, self.tr("images/s"))
        # the title names no whiskers: "(p10–p90)" did not fit the narrowest of the three plots at 1280 px
        rate_plot.setToolTip(self.tr("Each bar: the run's median images/s after warm-up; its whisker: p10 to p90"))
        self.rate_bars = RateBars(rate_plot)
        self.rate_plot, self.no_rate_text = self.rate_bars.plot, self.rate_bars.no_rate_text
        self.time_curves: list[pg.PlotDataItem] = []
        self.step_curves: list[pg.PlotDataItem] = []

        self.phase_split = PhaseSplit()  # each run's step time by phase, once a run has timed reports
        self.runs_label = QLabel()
        self.runs_label.setObjectName("compareRuns")
        self.runs_label.setWordWrap(True)
        self.headline = QLabel()
        self.headline.setObjectName("compareHeadline")
        self.headline.setWordWrap(True)
        self.headline.setStyleSheet("font-weight: bold; font-size: 12pt;")
        self.agreement = QLabel()
        self.agreement.setObjectName("compareAgreement")
        self.agreement.setWordWrap(True)
        self.agreement.hide()

        plots = QHBoxLayout()
        plots.setContentsMargins(0, 0, 0, 0)
        plots.addWidget(self.time_plot, 5)
        plots.addWidget(self.step_plot, 5)
        plots.addWidget(self.rate_plot, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addLayout(plots, 1)
        layout.addWidget(self.headline)
        layout.addWidget(self.agreement)
        layout.addWidget(self.phase_split)
        layout.addWidget(self.runs_label)

    @staticmethod
    def _plot(title: str, bottom: str, units: str | None, left: str) -> pg.PlotWidget:
        """A race plot with these (translated) texts."""
        plot = live_plot_widget()  # auto-range with headroom: a redraw does not rebuild the axes
        item = plot.getPlotItem()
        item.setTitle(title)
        item.setLabel("bottom", bottom, units=units)
        item.setLabel("left", left)
        plot.setMinimumSize(160, 100)  # room for a three-line headline under the plots at 1280 x 860
        return plot

    # ---- data in ---------------------------------------------------------------------------------
    def begin(self, contenders: Sequence[Any], steps: int, title: str) -> None:
        """A comparison starts: one empty race per contender (`gpu_train_monitor.compare.plan.Contender`). `title`: the
        comparison's name (a ready-made one's from core, translated here)."""
        self.time_plot.getPlotItem().clear()
        self.step_plot.getPlotItem().clear()
        self.result, self.steps = None, steps
        capacity = max(min(steps, CAPACITY), 16)
        labels = contender_labels(contenders)  # in the user's language
        self.races = [
            Race(c.index, labels[i], COLOURS[i % len(COLOURS)], RingBuffer(capacity, 3))
            for i, c in enumerate(contenders)
        ]
        self.time_curves, self.step_curves = [], []
        for race in self.races:
            pen = pg.mkPen(race.colour, width=1)
            name = self.tr("{number}. {label}").format(number=race.index + 1, label=race.label)
            self.time_curves.append(self.time_plot.plot(pen=pen, name=name, connect="finite"))
            self.step_curves.append(self.step_plot.plot(pen=pen, connect="finite"))
        self.rate_bars.begin(self.races)
        self.phase_split.begin(self.races)
        models = {c.config.model for c in contenders}
        values = dict(title=html.escape(core_text(title)), count=len(self.races), steps=steps)
        if len(models) == 1:
            self.header.setText(
                self.tr(
                    "<b>{title}</b>: {count} runs of {model}, <b>{steps} steps each</b>, one after another on the same "
                    "machine (images/s leaves out each run's first report: warm-up)"
                ).format(model=html.escape(models.pop()), **values)
            )
        else:
            self.header.setText(
                self.tr(
                    "<b>{title}</b>: {count} runs, <b>{steps} steps each</b>, one after another on the same machine "
                    "(images/s leaves out each run's first report: warm-up)"
                ).format(**values)
            )
        self.headline.setText(self.tr("racing: the headline comes when every run has finished"))
        self.agreement.hide()
        self._mark(*PARTS)

    def add(self, index: int, event: object) -> None:
        """An event of run `index` (unwrapped from its ContenderEvent)."""
        if not 0 <= index < len(self.races):
            return
        race = self.races[index]
        match event:
            case RunStarted():
                race.status, race.total = "running", event.total_steps
                self._mark()
            case StepsReported():
                count = len(event.losses)
                steps = np.arange(event.first_step, event.first_step + count, dtype=float)
                # each step's time, spread evenly over the report (only its end is measured)
                times = race.elapsed + (event.elapsed_s - race.elapsed) * np.arange(1, count + 1) / max(count, 1)
                race.data.extend(np.column_stack([steps, times, np.asarray(event.losses, dtype=float)]))
                race.elapsed, race.step = event.elapsed_s, event.step
                race.total = event.total_steps or race.total
                race.reports += 1
                if race.reports > 1:  # the first report carries start-up costs: not a throughput sample
                    race.rates.append(event.samples_per_s)
                if event.phases is not None:
                    self.phase_split.add(index, event.phases)
                self._mark("time", "step", "bars")
            case RunFinished():
                race.status, race.message = event.status, event.message
                self._mark("bars")

    def finish(self, result: ComparisonResult) -> None:
        """The comparison has concluded: the result's figures replace the live ones."""
        self.result = result
        for run in result.runs:
            if 0 <= run.index < len(self.races):
                self.races[run.index].result = run
                self.races[run.index].status = run.status
                self.races[run.index].message = run.message
        for race in self.races:
            if race.result is None and race.status == "waiting":
                race.status, race.message = "not run", not_run_reason(result.status)
        self.headline.setText(core_text(result.headline))
        if result.agreement:
            warn = result.losses_agree is False
            agreement = core_text(result.agreement)
            self.agreement.setText(self.tr("⚠ {agreement}").format(agreement=agreement) if warn else agreement)
            self.agreement.setProperty("warning", warn)
            self.agreement.setStyleSheet(
                f"color: {palette.ALERT}; font-weight: bold;" if warn else f"color: {palette.QUIET};"
            )
            self.agreement.show()
        self._mark("bars")

    def abandon(self) -> None:
        """The comparison's thread ended without a result (a crash, in the log): no run is still racing."""
        if self.result is not None:
            return
        for race in self.races:
            if race.status in ("waiting", "running"):
                race.status, race.message = "ended without a result", self.tr("see the log")
        self.headline.setText(self.tr("the comparison ended without a result: see the log"))
        self._mark("bars")

    def _mark(self, *parts: str) -> None:
        self._dirty.update(parts)
        self._text_dirty = True
        self.redraw.wake()

    # ---- what is shown ---------------------------------------------------------------------------
    def rate_of(self, race: Race) -> tuple[float, float, float] | None:
        """(images/s, p10, p90) as the bars show it: the result's once concluded, else the live reports'."""
        return race_rate(race)

    def bar_heights(self) -> list[float]:
        """The heights the bars show, one per run (0 for a run with no rate yet)."""
        return self.rate_bars.heights()

    def run_lines(self) -> list[str]:
        """Each run's status in words (also the text under the plots)."""
        slowest = min((r[0] for race in self.races if (r := race_rate(race))), default=None)
        # no "1.14x the slowest" once the result found the difference within the noise
        ratios = len(self.races) > 1 and (self.result is None or self.result.clear_difference is not False)
        return [race_line(race, slowest, ratios) for race in self.races]

    def refresh(self) -> bool:
        """Redraw one changed plot (and the status text). Nothing while hidden. Returns whether it drew."""
        return self.redraw.draw_one()

    def _draw_part(self, part: str) -> bool:
        """The throttle's part `part`: drawn if it changed; the status text first, whenever a part is tried."""
        if not is_shown(self):  # a hidden tab, a collapsed splitter: the data waits
            return False
        if self._text_dirty:
            self._text_dirty = False
            lines = self.run_lines()
            self.runs_label.setText(
                "<br>".join(
                    f"<span style='color:{_hex(race.colour)}'>■</span> {html.escape(line)}"
                    for race, line in zip(self.races, lines)
                )
            )
            self.phase_split.draw(self.races)
        if part not in self._dirty:
            return False
        self._dirty.discard(part)
        self._draw(part)
        return True

    def draw_now(self) -> None:
        """Everything that changed, at once (a screenshot, a test): the timer draws one part a tick."""
        self._text_dirty = True
        while self._dirty or self._text_dirty:
            if not self.refresh():
                break

    def bar_labels(self) -> list[str]:
        """The bars' names as the axis shows them."""
        return self.rate_bars.labels()

    def _draw(self, part: str) -> None:
        if part == "bars":
            self.rate_bars.draw(self.races, [self.rate_of(race) for race in self.races])
            return
        plot, curves, column = (
            (self.time_plot, self.time_curves, 1) if part == "time" else (self.step_plot, self.step_curves, 0)
        )
        for race, curve in zip(self.races, curves):
            set_curves(plot, [curve], *decimated_for(plot, race.data, 2, 3, x_column=column))

    def _zoomed(self, plot: pg.PlotWidget, part: str) -> None:
        if not plot.getPlotItem().getViewBox().autoRangeEnabled()[0]:
            self._mark(part)  # zoomed or panned by the user: decimate the newly visible part

    @Slot()
    def _on_time_range_changed(self, *_: object) -> None:
        self._zoomed(self.time_plot, "time")

    @Slot()
    def _on_step_range_changed(self, *_: object) -> None:
        self._zoomed(self.step_plot, "step")

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._catch_up()

    def resizeEvent(self, event: QResizeEvent) -> None:  # a collapsed splitter opened again
        super().resizeEvent(event)
        self.rate_bars.label(self.races)  # the names' room changed
        self._catch_up()

    def _catch_up(self) -> None:
        if self._dirty or self._text_dirty:
            self.redraw.wake()

    def stop(self) -> None:
        self.redraw.stop()
