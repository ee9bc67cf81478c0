"""The memory plot: allocated, reserved, peak, device-wide used and capacity against time.

Fed by `MemorySample`s from run reports and, at rest, from the window's idle polling of the same
`MemoryProbe`. Markers show cache clears (with the bytes freed) and errors. On the CPU the series are
relabelled: process RSS against system memory.

A data-parallel run shows every rank instead (`set_ranks`, `add_rank_samples`, `add_rank_rows`; drawn by
`gpu_train_monitor.gui.plots.rank_lines`): a colour per rank, its allocated, reserved and peak, and each device's
device-wide used. The plot's own allocated, reserved, peak and used lines (rank 0's, which the rank lines already show)
step aside meanwhile; capacity stays, and the check boxes show and hide each kind for every rank.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, Slot
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QVBoxLayout, QWidget

from gpu_train_monitor.events.events import MemorySample, RankSample
from gpu_train_monitor.gui.plots.live_plot import (
    arrange_legend,
    draw_decimated,
    is_shown,
    legend_above,
    live_plot_widget,
)
from gpu_train_monitor.gui.plots.rank_lines import RankLines
from gpu_train_monitor.gui.plots.rank_series import RankLayout
from gpu_train_monitor.gui.plots.ring_buffer import RingBuffer
from gpu_train_monitor.gui.qt import palette

CAPACITY = 200_000  # samples kept (about 5.5 hours at 10 per second)
OWN_LEGEND_COLUMNS = 5  # the plot's own five lines in one row above the data

# key: (column, GPU label, CPU label, colour, dashed, GPU tooltip, CPU tooltip); the texts are translated where shown
SERIES = {
    "allocated": (
        1,
        QT_TRANSLATE_NOOP("memory_plot", "allocated"),
        QT_TRANSLATE_NOOP("memory_plot", "process RSS"),
        palette.TAB_BLUE,
        False,
        QT_TRANSLATE_NOOP("memory_plot", "Bytes held by live tensors (torch.cuda.memory_allocated)"),
        QT_TRANSLATE_NOOP("memory_plot", "Resident memory of this process (RSS): tensors, code, caches"),
    ),
    "reserved": (
        2,
        QT_TRANSLATE_NOOP("memory_plot", "reserved"),
        QT_TRANSLATE_NOOP("memory_plot", "reserved"),
        palette.TAB_ORANGE,
        False,
        QT_TRANSLATE_NOOP(
            "memory_plot", "Bytes the caching allocator holds from the driver: allocated plus cached free blocks"
        ),
        QT_TRANSLATE_NOOP("memory_plot", "The CPU has no caching allocator"),
    ),
    "peak": (
        3,
        QT_TRANSLATE_NOOP("memory_plot", "peak allocated"),
        QT_TRANSLATE_NOOP("memory_plot", "peak RSS"),
        palette.TAB_RED,
        False,
        QT_TRANSLATE_NOOP("memory_plot", "Highest allocated since the run started (torch.cuda.max_memory_allocated)"),
        QT_TRANSLATE_NOOP("memory_plot", "Highest process RSS since the run started"),
    ),
    "device_used": (
        4,
        QT_TRANSLATE_NOOP("memory_plot", "device used (all processes)"),
        QT_TRANSLATE_NOOP("memory_plot", "system used"),
        palette.TAB_PURPLE,
        False,
        QT_TRANSLATE_NOOP(
            "memory_plot", "Used on the whole GPU per NVML: includes the CUDA context and other processes"
        ),
        QT_TRANSLATE_NOOP("memory_plot", "Memory used by every process on this machine"),
    ),
    "capacity": (
        5,
        QT_TRANSLATE_NOOP("memory_plot", "capacity"),
        QT_TRANSLATE_NOOP("memory_plot", "system memory"),
        palette.AXIS_GREY,
        True,
        QT_TRANSLATE_NOOP("memory_plot", "Total memory of the device"),
        QT_TRANSLATE_NOOP("memory_plot", "Total memory of this machine"),
    ),
}
# the CPU's capacity when the process has a limit below system memory (gpu_train_monitor.memory.probe.ProcessLimit's
# kinds): (label, how it is set, tooltip); the label and tooltip are translated where shown
CAPACITY_LIMITS = {
    "RLIMIT_AS": (
        QT_TRANSLATE_NOOP("memory_plot", "process limit"),
        "ulimit -v",
        QT_TRANSLATE_NOOP(
            "memory_plot",
            "This process's address-space limit (ulimit -v, RLIMIT_AS). It "
            "counts mapped libraries and reservations too, so allocations fail "
            "while the RSS is still well below it",
        ),
    ),
    "RLIMIT_DATA": (
        QT_TRANSLATE_NOOP("memory_plot", "process limit"),
        "ulimit -d",
        QT_TRANSLATE_NOOP(
            "memory_plot", "This process's data-size limit (ulimit -d, RLIMIT_DATA): its heap and private mappings"
        ),
    ),
    "cgroup": (
        QT_TRANSLATE_NOOP("memory_plot", "cgroup limit"),
        "cgroup memory.max",
        QT_TRANSLATE_NOOP(
            "memory_plot", "The memory limit of this process's control group (cgroup), shared by every process in it"
        ),
    ),
}


def shown(text: str) -> str:
    """A text of `SERIES` in the user's language."""
    return QCoreApplication.translate("memory_plot", text)


class MemoryPlot(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data = RingBuffer(CAPACITY, 6)  # t, allocated, reserved, peak, device_used, capacity
        self._t0: float | None = None
        self._dirty = False
        self._has_allocator = True
        self._capacity = 0
        self._capacity_limit: str | None = None  # the CPU's capacity is this process limit (CAPACITY_LIMITS' key)
        self._held_peak = 0  # a finished run's peak, kept by the peak line at rest (`hold_peak`)
        self.markers: list[pg.InfiniteLine] = []

        self.plot = live_plot_widget()
        item = self.plot.getPlotItem()
        item.setTitle(self.tr("Device memory"))
        item.setLabel("bottom", self.tr("time"), units="s")
        item.setLabel("left", self.tr("memory"), units="B")  # SI prefixes: kB, MB, GB on the axis
        self.legend = legend_above(item, OWN_LEGEND_COLUMNS)  # a row above the data: no curve or marker under it
        self.plot.setMinimumHeight(110)  # title, legend and axis leave a readable band of data
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.toggles: dict[str, QCheckBox] = {}
        toggles = QHBoxLayout()
        for key, (_, label, _, colour, dashed, tip, _) in SERIES.items():
            pen = pg.mkPen(colour, width=1, style=Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine)
            curve = pg.PlotDataItem(pen=pen, name=shown(label), connect="finite")
            # capacity is drawn but does not stretch the auto-range: the live curves stay readable
            item.addItem(curve, ignoreBounds=key == "capacity")
            self.curves[key] = curve
            box = QCheckBox(shown(label))
            box.setChecked(True)
            box.setToolTip(shown(tip))
            box.toggled.connect(self._on_toggle)
            toggles.addWidget(box)
            self.toggles[key] = box
        toggles.addStretch(1)
        self.ranks = RankLines(self.plot, self.legend)
        item.getViewBox().sigXRangeChanged.connect(self._on_x_range_changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addLayout(toggles)

    def set_device_kind(self, has_allocator: bool) -> None:
        """Relabel for the CPU (RSS vs system memory) or a GPU (allocator counters vs capacity)."""
        if has_allocator == self._has_allocator:
            return
        self._has_allocator = has_allocator
        self._capacity = 0  # the title is set again with the capacity by the next sample
        for key, (_, gpu_label, cpu_label, _, _, gpu_tip, cpu_tip) in SERIES.items():
            label = gpu_label if has_allocator else cpu_label
            self.toggles[key].setText(shown(label))
            self.toggles[key].setToolTip(shown(gpu_tip if has_allocator else cpu_tip))
        self.toggles["reserved"].setVisible(has_allocator)
        self._relist()

    def _own_line_shown(self, key: str) -> bool:
        """Whether the plot's own line `key` is part of the plot now (its check box aside): no reserved on the
        CPU, and only capacity while the ranks of a data-parallel run are shown."""
        return (key != "reserved" or self._has_allocator) and (key == "capacity" or not self.ranks.active)

    def _relist(self) -> None:
        """The plot's own lines in the legend (after the ranks' lines) and shown, as the mode says."""
        for key, (_, gpu_label, cpu_label, *_) in SERIES.items():
            curve = self.curves[key]
            self.legend.removeItem(curve)
            if self._own_line_shown(key):
                self.legend.addItem(curve, shown(gpu_label if self._has_allocator else cpu_label))
            curve.setVisible(self._own_line_shown(key) and self.toggles[key].isChecked())
        self._label_capacity()
        arrange_legend(self.legend, self.ranks.legend_columns if self.ranks.active else OWN_LEGEND_COLUMNS)
        self._dirty = True

    def _label_capacity(self) -> None:
        """The capacity line under a process limit on the CPU is that limit, and says which (label, tooltip,
        legend); otherwise SERIES' own words."""
        limit = None if self._has_allocator else CAPACITY_LIMITS.get(self._capacity_limit or "")
        if limit is None:
            _, gpu_label, cpu_label, _, _, gpu_tip, cpu_tip = SERIES["capacity"]
            label, tip = (gpu_label, gpu_tip) if self._has_allocator else (cpu_label, cpu_tip)
        else:
            label, _, tip = limit
        self.toggles["capacity"].setText(shown(label))
        self.toggles["capacity"].setToolTip(shown(tip))
        legend_label = self.legend.getLabel(self.curves["capacity"])
        if legend_label is not None:
            legend_label.setText(shown(label))

    def hold_peak(self, peak_bytes: int) -> None:
        """A run ended with this peak (its summary's, as the log and the Runs table give it): the peak line
        keeps it at rest, where the idle poll reads the window's own probe, which did not watch the run and
        would draw the line lower. The next run (or another device) clears it."""
        self._held_peak = max(self._held_peak, int(peak_bytes))

    def peak_of(self, sample: MemorySample) -> int:
        """The peak drawn for `sample`: its own, or a finished run's held peak when that is higher."""
        return max(sample.peak_allocated_bytes, self._held_peak)

    def set_ranks(self, devices: Sequence[str]) -> None:
        """A data-parallel run's ranks (their devices, by rank): a line per rank and kind from now on; one
        device or none: the plot's own lines again. The same ranks as before keep their lines."""
        if self.ranks.set_layout(RankLayout(tuple(devices)) if len(devices) > 1 else None):
            self._relist()

    def add_rank_samples(self, time_s: float, ranks: Sequence[RankSample]) -> None:
        """Every rank's sample of one report, at `time_s` (rank 0's clock: the ranks' own may be other
        machines'). Ranks other than those set before are set from these samples."""
        devices = {sample.rank: sample.device for sample in ranks}
        layout = self.ranks.layout
        if layout is None or any(layout.devices[rank : rank + 1] != (device,) for rank, device in devices.items()):
            self.set_ranks(RankLayout.of_rows(ranks).devices)
            layout = self.ranks.layout
        if layout is None:  # a single rank: the plot's own lines show it
            return
        self.ranks.extend(np.array([layout.row(self.seconds(time_s), {s.rank: s.memory for s in ranks})]))
        self._dirty = True

    def add_rank_rows(self, devices: Sequence[str], rows: np.ndarray) -> None:
        """Many reports of ranks on `devices` at once (a recorded run's), as `RankLayout(devices).rows...`
        made them: seconds since the first sample first."""
        self.set_ranks(devices)
        if self.ranks.active and len(rows):
            self.ranks.extend(rows)
            self._dirty = True

    def clear(self) -> None:
        """A new run: no samples, no markers, no ranks (its RunStarted says whether it has any)."""
        self.data.clear()
        self.set_ranks(())
        self._t0 = None
        self._held_peak = 0
        for marker in self.markers:
            self.plot.removeItem(marker)
        self.markers.clear()
        self._dirty = True

    def seconds(self, time_s: float) -> float:
        """Plot time (seconds since the first sample) of a monotonic timestamp."""
        if self._t0 is None:
            self._t0 = time_s
        return time_s - self._t0

    def continue_at(self, time_s: float, gap_s: float) -> None:
        """Samples of another clock come next: the idle poll's (`time.monotonic`, the machine's uptime) after a run
        read from the store, whose samples are seconds since its start. `time_s` of the new clock is placed
        `gap_s` after the last sample, so the axis goes on from there (not to the uptime, with a line across the
        gap); markers and samples of the new clock follow it."""
        last = self.data.last(0)
        self._t0 = time_s if last is None else time_s - (last + gap_s)

    def add_sample(self, s: MemorySample) -> None:
        self.set_device_kind(s.has_allocator)
        limit = None if s.has_allocator else s.capacity_limit
        if s.capacity_bytes != self._capacity or limit != self._capacity_limit:
            self._capacity = s.capacity_bytes
            from gpu_train_monitor.base.text import format_bytes

            capacity = format_bytes(s.capacity_bytes)
            title = (
                self.tr("Device memory, capacity {capacity}").format(capacity=capacity)
                if s.has_allocator
                else self.tr("Process memory (CPU), capacity {capacity}").format(capacity=capacity)
            )
            if limit in CAPACITY_LIMITS:
                title = self.tr("Process memory (CPU), capacity {capacity} ({limit})").format(  # the process's limit
                    capacity=capacity, limit=CAPACITY_LIMITS[limit][1]
                )
            self.plot.getPlotItem().setTitle(title)
            if limit != self._capacity_limit:
                self._capacity_limit = limit
                self._label_capacity()
        used = float("nan") if s.device_used_bytes is None else s.device_used_bytes
        self.data.append(
            self.seconds(s.time_s), s.allocated_bytes, s.reserved_bytes, self.peak_of(s), used, s.capacity_bytes
        )
        self._dirty = True

    def add_rows(self, rows: np.ndarray) -> None:
        """Many readings in one append (a recorded run's reports: 100k `add_sample` calls took 1.6 s), as the
        buffer's rows in time order: seconds since the first sample, allocated, reserved, peak, device used
        (NaN where unknown), capacity. The device kind and the capacity come from an `add_sample` before."""
        self.data.extend(rows)
        self._dirty = True

    def add_marker(self, time_s: float, text: str, error: bool = False) -> pg.InfiniteLine:
        """A labelled vertical line: a cache clear (with bytes freed) or an error such as out of memory."""
        colour = (200, 0, 0) if error else (0, 140, 70)
        line = pg.InfiniteLine(
            pos=self.seconds(time_s),
            angle=90,
            pen=pg.mkPen(colour, width=1),
            label=text,
            labelOpts={"position": 0.02, "color": colour, "rotateAxis": (1, 0), "anchors": [(0, 1), (0, 1)]},
        )  # reads up from the bottom edge
        line.setToolTip(text)
        self.plot.addItem(line)
        self.markers.append(line)
        return line

    def refresh(self) -> bool:
        """Redraw if a sample arrived since the last call and the plot can be seen. Returns whether it drew."""
        if not self._dirty or not is_shown(self.plot):
            return False  # a hidden plot stays dirty: it is drawn once shown
        self._dirty = False
        if self.ranks.active:  # of the plot's own lines only capacity is shown
            draw_decimated(self.plot, [self.curves["capacity"]], self.data, first=SERIES["capacity"][0])
            self.ranks.refresh()
            return True
        curves = [self.curves[key] for key in sorted(SERIES, key=lambda k: SERIES[k][0])]  # columns 1..5
        draw_decimated(self.plot, curves, self.data)
        return True

    @Slot()
    def _on_x_range_changed(self, *_: object) -> None:
        if not self.plot.getPlotItem().getViewBox().autoRangeEnabled()[0]:
            self._dirty = True  # zoomed or panned: decimate the newly visible part

    @Slot(bool)
    def _on_toggle(self, _checked: bool) -> None:
        for key, box in self.toggles.items():
            self.curves[key].setVisible(box.isChecked() and self._own_line_shown(key))
            self.ranks.set_kind_visible(key, box.isChecked())
        self._dirty = True  # a curve shown again gets the samples it missed while hidden
