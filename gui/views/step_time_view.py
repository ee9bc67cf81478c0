"""Where a training step's time goes: a stacked bar per report (the median step's phases, in milliseconds, against
the report's step), the latest report's split as numbers, and the verdict with what to try, so a user sees at a
glance whether the run waits for its data.

Fed with each `StepsReported` (`gpu_train_monitor.gui.views.event_display`), live or recorded alike. A run whose
reports carry no phases (a watched script's, one recorded before phases were timed) says so in one line instead of
showing an empty plot. Reports go into a ring buffer; a redraw averages them into at most a few hundred bars (one
every few pixels), so thousands of reports cost what a few hundred do, and nothing is drawn while the tab is hidden.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from gpu_train_monitor.events.events import STEP_PHASES, StepPhases, StepsReported
from gpu_train_monitor.gui.plots.decimate import visible_slice
from gpu_train_monitor.gui.plots.live_plot import is_shown, legend_above, live_plot_widget, settle_axes
from gpu_train_monitor.gui.plots.ring_buffer import RingBuffer
from gpu_train_monitor.gui.qt.locale_format import integer, number
from gpu_train_monitor.gui.views.step_phase_text import PHASE_COLOURS, colour_hex, phase_name, shares, verdict_line

if TYPE_CHECKING:
    from gpu_train_monitor.store.rows import ReportRow

CAPACITY = 200_000  # reports kept (a report every second: more than two days)
PIXELS_PER_BAR = 4  # a redraw shows at most one bar every this many pixels: more reports are averaged into one
BAR_FILL = 0.8  # of the steps a bar covers, the rest a gap between bars


def aggregate(x: np.ndarray, ys: np.ndarray, bars: int) -> tuple[np.ndarray, np.ndarray]:
    """At most `bars` bars: consecutive reports averaged in groups (x at each group's mean step), so a long run's
    bars keep their stack's shape at a few hundred rectangles. `ys`: shape (phases, reports)."""
    n = len(x)
    if n <= bars:
        return x, ys
    size = -(-n // bars)  # ceil
    whole = (n // size) * size
    out_x = x[:whole].reshape(-1, size).mean(axis=1)
    out_y = ys[:, :whole].reshape(len(ys), -1, size).mean(axis=2)
    if whole < n:  # the tail, shorter than a group: one bar of its own
        out_x = np.append(out_x, x[whole:].mean())
        out_y = np.column_stack([out_y, ys[:, whole:].mean(axis=1)])
    return out_x, out_y


def covered_steps(x: np.ndarray) -> np.ndarray:
    """The steps each bar stands for: from the previous bar's step to its own (the first, the median's), so that
    reports spaced unevenly (a machine that slowed, a loop that evaluated) tile the axis without holes."""
    if len(x) == 0:
        return np.ones(0)
    first = float(np.median(np.diff(x))) if len(x) > 1 else 1.0
    return np.diff(x, prepend=x[0] - first)


class StepTimeView(QWidget):
    """The Step time tab: `add_report` per report, `refresh` (the run view's redraw throttle) draws the bars."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data = RingBuffer(CAPACITY, 1 + len(STEP_PHASES))  # step, then each phase's ms per step
        self.latest: StepPhases | None = None
        self.latest_step = 0
        self.reports = 0  # reports seen, with phases or without
        self._dirty = False

        self.note = QLabel()
        self.note.setObjectName("stepTimeNote")
        self.note.setWordWrap(True)
        self.plot = live_plot_widget()
        item = self.plot.getPlotItem()
        item.setLabel("bottom", self.tr("step"))
        item.setLabel("left", self.tr("ms per step"))
        for axis in ("bottom", "left"):
            item.getAxis(axis).enableAutoSIPrefix(False)  # steps are counted and ms already scaled
        item.getViewBox().sigXRangeChanged.connect(self._on_x_range_changed)
        self.legend = legend_above(item, len(STEP_PHASES))
        self.bars: list[pg.BarGraphItem] = []
        for phase in STEP_PHASES:
            bar = pg.BarGraphItem(x=[], height=[], width=1.0, brush=pg.mkBrush(*PHASE_COLOURS[phase]), pen=None)
            bar.setOpts(pen=pg.mkPen(None))  # no outlines: hundreds of thin bars stay their colour
            self.plot.addItem(bar)
            self.bars.append(bar)
            self.legend.addItem(bar, phase_name(phase))  # its sample: a square of the bar's own brush
        self.plot.setMinimumSize(240, 140)

        self.split_title = QLabel()
        self.split_title.setObjectName("stepTimeSplitTitle")
        split = QGridLayout()
        split.setContentsMargins(0, 0, 0, 0)
        split.setVerticalSpacing(2)
        split.addWidget(self.split_title, 0, 0, 1, 3)
        self.gpu_header = QLabel(self.tr("on the GPU"))  # CUDA: the same phases on the GPU's own clock
        self.gpu_header.setToolTip(
            self.tr("Timed with CUDA events on sampled steps; the copy runs inside the data phase on the GPU.")
        )
        split.addWidget(self.gpu_header, 0, 3)
        self.phase_labels: dict[str, tuple[QLabel, QLabel, QLabel, QLabel]] = {}
        for row, phase in enumerate((*STEP_PHASES, "step"), start=1):
            cells = (QLabel(), QLabel(), QLabel(), QLabel())
            for column, cell in enumerate(cells):
                split.addWidget(cell, row, column)
            self.phase_labels[phase] = cells
        split.setRowStretch(len(STEP_PHASES) + 2, 1)
        self.verdict = QLabel()
        self.verdict.setObjectName("stepTimeVerdict")
        self.verdict.setWordWrap(True)
        self.verdict.setStyleSheet("font-weight: bold;")

        body = QHBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self.plot, 1)
        body.addLayout(split)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.note)
        layout.addLayout(body, 1)
        layout.addWidget(self.verdict)
        self.show_again()

    # ---- data in ---------------------------------------------------------------------------------
    def clear(self) -> None:
        """A new run: no bars, no split, the note that says what will come."""
        self.data.clear()
        self.latest, self.latest_step, self.reports = None, 0, 0
        for bar in self.bars:  # now: the plot is hidden until the next timed report, so no redraw would
            bar.setOpts(x=[], x1=[], width=[], y0=[], height=[])
        self._dirty = False
        self.show_again()

    def add_report(self, event: StepsReported) -> None:
        """One report: its phases (if measured) as a bar, the split and the verdict as its numbers."""
        self.add_phases(event.step, event.phases)

    def add_rows(self, reports: Sequence[ReportRow]) -> None:
        """A recorded run's report rows (the store keeps each one's phases), drawn at once."""
        for row in reports:
            self.add_phases(row.step, row.phases)
        self.refresh()

    def add_phases(self, step: int, phases: StepPhases | None) -> None:
        self.reports += 1
        if phases is None:
            if self.latest is None:
                self._say_state()
            return
        self.data.append(float(step), *(1000.0 * s for s in phases.seconds))
        self.latest, self.latest_step = phases, step
        self._dirty = True
        self._show_split()

    # ---- what is shown ---------------------------------------------------------------------------
    def show_again(self) -> None:
        """Every text said again (a language change: new words and the locale's digits)."""
        self.split_title.setText(self.tr("<b>Latest report</b>"))
        for i, phase in enumerate(STEP_PHASES):
            self.phase_labels[phase][0].setText(f"<span style='color:{colour_hex(phase)}'>■</span> {phase_name(phase)}")
            self.legend.items[i][1].setText(phase_name(phase))
        self.phase_labels["step"][0].setText(self.tr("whole step"))
        item = self.plot.getPlotItem()
        item.setLabel("bottom", self.tr("step"))
        item.setLabel("left", self.tr("ms per step"))
        self.plot.setToolTip(
            self.tr(
                "Each bar: one report's median step, split by phase on the host's clock "
                "(reports are averaged together when there are more than the plot's width shows)"
            )
        )
        self._say_state()
        self._show_split()

    def _say_state(self) -> None:
        """The note instead of the plot while there are no phases to show."""
        if self.latest is not None:
            self.note.hide()
            self.plot.show()
            return
        if self.reports > 1:  # the first report is never timed: after it, the run does not time its steps
            text = self.tr("This run's reports carry no step phases: its step time cannot be split.")
        else:
            text = self.tr("No step time yet: each report after the run's first splits its steps by phase.")
        self.note.setText(text)
        self.note.show()
        self.plot.hide()

    def _show_split(self) -> None:
        phases = self.latest
        if phases is None:
            for cells in self.phase_labels.values():
                cells[1].setText("–")
                cells[2].setText("")
            self._show_device(None)
            self.verdict.setText("")
            self._say_state()
            return
        self._say_state()
        self.split_title.setText(self.tr("<b>At step {step}</b>").format(step=integer(self.latest_step)))
        for phase, seconds, share in zip(STEP_PHASES, phases.seconds, shares(phases)):
            self.phase_labels[phase][1].setText(self.tr("{ms} ms").format(ms=number(1000 * seconds, 1)))
            self.phase_labels[phase][2].setText(self.tr("{percent}%").format(percent=number(100 * share, 0)))
        self.phase_labels["step"][1].setText(self.tr("{ms} ms").format(ms=number(1000 * phases.step_s, 1)))
        self.phase_labels["step"][2].setText("")
        self._show_device(phases.device_seconds)
        self.verdict.setText(verdict_line(phases))

    def _show_device(self, device_seconds: tuple[float, ...] | None) -> None:
        """The GPU's own times in the fourth column, on CUDA (hidden elsewhere: the host's clock is all there is)."""
        self.gpu_header.setVisible(device_seconds is not None)
        for phase, cells in self.phase_labels.items():
            cells[3].setVisible(device_seconds is not None)
            if device_seconds is not None and phase in STEP_PHASES:
                ms = 1000 * device_seconds[STEP_PHASES.index(phase)]
                cells[3].setText(self.tr("{ms} ms").format(ms=number(ms, 1)))
            elif device_seconds is not None:
                cells[3].setText(self.tr("{ms} ms").format(ms=number(1000 * sum(device_seconds), 1)))

    def refresh(self) -> bool:
        """Redraw the bars if reports arrived and the tab can be seen; returns whether it drew."""
        if not self._dirty or not is_shown(self.plot):
            return False
        self._dirty = False
        view = self.plot.getPlotItem().getViewBox()
        steps = self.data.column(0)
        part = visible_slice(steps, None if view.autoRangeEnabled()[0] else tuple(view.viewRange()[0]))
        x, ys = aggregate(steps[part], self.data.columns(1, 1 + len(STEP_PHASES))[:, part], self._bar_count())
        covered = covered_steps(x)
        right = x - covered * (1 - BAR_FILL) / 2  # a bar over the steps its report covers, ending at its step
        bottom = np.zeros(len(x))
        for bar, heights in zip(self.bars, ys):
            bar.setOpts(x=x, x1=right, width=covered * BAR_FILL, y0=bottom.copy(), height=heights)
            bottom += heights
        settle_axes(self.plot)
        return True

    def bar_count(self) -> int:
        """The bars drawn (after averaging)."""
        heights = self.bars[0].opts.get("height")
        return 0 if heights is None else len(heights)

    def _bar_count(self) -> int:
        return max(self.plot.width() // PIXELS_PER_BAR, 50)

    def _on_x_range_changed(self, *_: object) -> None:
        if not self.plot.getPlotItem().getViewBox().autoRangeEnabled()[0]:
            self._dirty = True  # zoomed or panned by the user: the newly visible reports at their own detail

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._dirty:  # reports came while the tab was hidden: draw them now, not at the next report
            self.refresh()
