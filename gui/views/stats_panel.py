"""Live numbers for the current run: state, step, epoch, images/s (tokens/s for a text run), ETA, progress, memory."""

from __future__ import annotations

import bisect
import math

import numpy as np
from PySide6.QtWidgets import QGridLayout, QLabel, QProgressBar, QWidget

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.gui.i18n.throughput_text import speed_label, speed_tooltip
from gpu_train_monitor.gui.qt.locale_format import integer, number
from gpu_train_monitor.gui.views.window_state import WindowState


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class RateMedian:
    """A live run's images/s as its summary measures it (gpu_train_monitor.engine.loop_state): the median of the
    reports' rates after the first, which holds start-up and torch.compile (the warm-up). Kept sorted: a report costs a
    bisect, not a sort of every rate so far."""

    def __init__(self) -> None:
        self._sorted: list[float] = []
        self._reports = 0

    def clear(self) -> None:
        self._sorted, self._reports = [], 0

    def add(self, samples_per_s: float) -> None:
        self._reports += 1
        if self._reports > 1 and math.isfinite(samples_per_s):
            bisect.insort(self._sorted, samples_per_s)

    @property
    def median(self) -> float | None:
        """None until a report after the warm-up."""
        rates, middle = self._sorted, len(self._sorted) // 2
        if not rates:
            return None
        return rates[middle] if len(rates) % 2 else (rates[middle - 1] + rates[middle]) / 2


def median_rate(rates: np.ndarray) -> float | None:
    """The median images/s of recorded reports' rates (oldest first), the first left out as the warm-up."""
    after = np.asarray(rates, dtype=np.float64)[1:]
    after = after[np.isfinite(after)]
    return float(np.median(after)) if len(after) else None


def planned_epochs(epochs: int | None, total_steps: int, steps_per_epoch: int) -> int | None:
    """The epochs a run's start plans, as `StatsPanel.reset` takes them: 0 for a run without epochs (a watched
    script: no steps per epoch), else its epochs, or as many as its total steps need."""
    if steps_per_epoch <= 0:
        return 0
    return epochs or math.ceil(total_steps / steps_per_epoch)


class StatsPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        self.state_label = QLabel()
        self.state_label.setObjectName("stateLabel")
        grid.addWidget(self.state_label, 0, 0, 1, 2)
        self.values: dict[str, QLabel] = {}
        self.titles: dict[str, QLabel] = {}
        self.unit = "images/s"  # the run's throughput unit (gpu_train_monitor.config.sequences.throughput)
        rows = [
            ("step", self.tr("Step")),
            ("epoch", self.tr("Epoch")),
            ("speed", speed_label("images/s")),
            ("eta", self.tr("ETA")),
            ("memory", self.tr("Memory now")),
            ("peak", self.tr("Peak")),
        ]
        tips = {
            "memory": self.tr("Allocated by tensors now (on the CPU: process RSS)"),
            "peak": self.tr("Highest allocated since the run started (on the CPU: peak RSS)"),
            "speed": speed_tooltip("images/s"),
            "eta": self.tr("Time left at the median speed"),
        }
        for i, (key, title) in enumerate(rows, start=1):
            label = QLabel(title)
            value = QLabel("–")
            value.setMinimumWidth(110)  # changing numbers must not re-layout (and repaint) the window
            value.setProperty("class", "statValue")
            label.setToolTip(tips.get(key, ""))
            value.setToolTip(tips.get(key, ""))
            grid.addWidget(label, i, 0)
            grid.addWidget(value, i, 1)
            self.values[key] = value
            self.titles[key] = label
        # a data-parallel run: each rank's images/s under the total (hidden for an ordinary run)
        self.rank_speed_title = QLabel(self.tr("per rank"))
        self.rank_speed = QLabel("–")
        self.rank_speed.setWordWrap(True)  # 8 ranks' numbers wrap rather than widen the panel
        for w in (self.rank_speed_title, self.rank_speed):
            w.setToolTip(self.tr("Each rank's training images per second over the last report, by rank"))
            w.hide()
        grid.addWidget(self.rank_speed_title, len(rows) + 1, 0)
        grid.addWidget(self.rank_speed, len(rows) + 1, 1)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("%p%")
        grid.addWidget(self.progress, len(rows) + 2, 0, 1, 2)
        self.total_steps, self.epochs = 1, None
        self.set_state(WindowState.IDLE)

    def set_unit(self, unit: str) -> None:
        """Name the speed row in the run's unit: images/s, tokens/s (a text run) or samples/s (a watched loop). The
        figures it is given are in that unit."""
        self.unit = unit
        self.titles["speed"].setText(speed_label(unit))
        for widget in (self.titles["speed"], self.values["speed"]):
            widget.setToolTip(speed_tooltip(unit))

    def set_state(self, state: WindowState) -> None:
        self.state = state
        self.state_label.setText(f"<span style='color:{state.colour}'>● {state.shown}</span>")

    def reset(self, total_steps: int, epochs: int | None) -> None:
        """A new run: `epochs` None when the run takes as many epochs as its max_steps needs, 0 when it has
        none (a watched script); `total_steps` 0 when it is not known (a watched script's own loop): then no
        total, progress or time left is shown, only the steps done."""
        self.total_steps, self.epochs = max(total_steps, 0), epochs
        self._show_total(self.total_steps)
        if not self.total_steps:  # not known yet: said once a step is reported without one
            self.progress.setFormat("")
        self.progress.setValue(0)
        for key in self.values:
            self.values[key].setText("–")
        self.show_rank_speeds("")
        if self.total_steps:
            self.values["step"].setText(f"0 / {integer(total_steps)}")
        self.values["epoch"].setText(self._epoch_text(1))

    def _show_total(self, total_steps: int) -> None:
        self.progress.setRange(0, max(total_steps, 1))
        self.progress.setFormat("%p%" if total_steps else self.tr("no total"))
        self.progress.setToolTip("" if total_steps else self.tr("The script does not say how many steps it will train"))

    def update_progress(
        self, step: int, epoch: int, samples_per_s: float | None, eta_s: float | None, total_steps: int = 0
    ) -> None:
        """`samples_per_s`: the run's median so far (`RateMedian`, `median_rate`), None during the warm-up (0:
        a run that does not count its samples)."""
        if total_steps and total_steps != self.total_steps:  # an out-of-memory shrink adds steps
            self.total_steps = total_steps
            self._show_total(total_steps)
        elif not self.total_steps and not self.progress.format():  # a step reported, and still no total
            self._show_total(0)
        known = self.total_steps > 0
        self.values["step"].setText(f"{integer(step)} / {integer(self.total_steps)}" if known else integer(step))
        self.values["epoch"].setText(self._epoch_text(epoch))
        self.values["speed"].setText(number(samples_per_s, 0) if samples_per_s else "–")
        self.values["eta"].setText(format_duration(eta_s if known else None))
        self.progress.setValue(min(step, self.total_steps) if known else 0)

    def show_rank_speeds(self, text: str, tooltip: str = "") -> None:
        """Each rank's images/s ('1,210 · 1,198 img/s'); empty: an ordinary run, the row hidden."""
        self.rank_speed.setText(text)
        self.rank_speed.setToolTip(tooltip)
        self.rank_speed.setVisible(bool(text))
        self.rank_speed_title.setVisible(bool(text))

    def _epoch_text(self, epoch: int) -> str:
        if self.epochs == 0:  # a run without epochs (a watched script's own loop)
            return "–"
        return f"{integer(epoch)} / {integer(self.epochs)}" if self.epochs else integer(epoch)

    def update_memory(self, current: int, peak: int) -> None:
        self.values["memory"].setText(format_bytes(current))
        self.values["peak"].setText(format_bytes(peak))

    def show_end(self, samples_per_s: float | None, peak_bytes: int) -> None:
        """The run's own figures once it has ended (its summary's, as the log line and the Runs table give
        them): the median images/s and the peak, which readings after the last report may have raised."""
        if samples_per_s:  # 0: the run did not count its samples
            self.values["speed"].setText(number(samples_per_s, 0))
        if peak_bytes:
            self.values["peak"].setText(format_bytes(peak_bytes))
