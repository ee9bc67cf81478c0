"""The ranks of a data-parallel run as plot data: what each rank is called, which lines it gets, and its
readings (live `RankSample`s or the store's rank reports) as rows of one buffer.

All ranks are read at the same report, so their lines share one time column: a report is one row
(seconds, then each rank's allocated, reserved and peak, then each device's device-wide used) and the
plot decimates every line in one numpy call. No widgets here: the background reader of a recorded run builds
these rows off the GUI thread. The names are in the user's language (Qt's translator, which any thread may use).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from gpu_train_monitor.events.events import MemorySample
from gpu_train_monitor.gui.qt.locale_format import number
from gpu_train_monitor.store.rows import RankReportRow

Reading = MemorySample | RankReportRow  # a rank's reading: live, or the store's

# The memory plot's lines (`gpu_train_monitor.gui.plots.memory_plot.SERIES`'s keys, in its column order) and the memory
# sample's column (gpu_train_monitor.events.events.SAMPLE_COLUMNS) each one draws
SERIES_COLUMNS = {
    "allocated": "allocated_bytes",
    "reserved": "reserved_bytes",
    "peak": "peak_allocated_bytes",
    "device_used": "device_used_bytes",
    "capacity": "capacity_bytes",
}
# (key, the reading's field) of each rank's own lines; its check boxes show and hide them as the plot's own
RANK_KINDS = tuple((key, SERIES_COLUMNS[key]) for key in ("allocated", "reserved", "peak"))
# a rank's line in the legend, by kind: on a GPU the allocator's counters, on the CPU the process RSS
KIND_NAMES = {
    "allocated": (QT_TRANSLATE_NOOP("rank_series", "{rank} allocated"), QT_TRANSLATE_NOOP("rank_series", "{rank} RSS")),
    "reserved": (
        QT_TRANSLATE_NOOP("rank_series", "{rank} reserved"),
        QT_TRANSLATE_NOOP("rank_series", "{rank} reserved"),
    ),
    "peak": (QT_TRANSLATE_NOOP("rank_series", "{rank} peak"), QT_TRANSLATE_NOOP("rank_series", "{rank} peak RSS")),
}


def has_allocator(device: str) -> bool:
    """Whether a device has allocator counters (CUDA, MPS) rather than process RSS (the CPU)."""
    return not device.startswith("cpu")


def rank_names(devices: Sequence[str]) -> tuple[str, ...]:
    """What each rank is called (by rank): 'GPU 1' for a GPU no other rank uses (a rank per GPU, the usual
    case), else 'rank 1 (cpu)': CPU ranks share a machine, and ranks of several machines share GPU numbers."""
    translate = QCoreApplication.translate
    return tuple(
        _gpu_name(device)
        if device.startswith("cuda:") and devices.count(device) == 1
        else translate("rank_series", "rank {rank} ({device})").format(rank=rank, device=device)
        for rank, device in enumerate(devices)
    )


def rank_name(rank: int) -> str:
    """'rank 1': a rank known by its number only."""
    return QCoreApplication.translate("rank_series", "rank {rank}").format(rank=rank)


def _gpu_name(device: str) -> str:
    return QCoreApplication.translate("rank_series", "GPU {index}").format(index=device.split(":", 1)[1])


def device_name(device: str) -> str:
    """A device in a legend: 'GPU 1' for 'cuda:1', else the device itself."""
    return _gpu_name(device) if device.startswith("cuda:") else device


@dataclass(frozen=True)
class RankLine:
    """One line of the ranks' plot: its legend name, the rank whose colour it takes, and its kind (a key of
    `gpu_train_monitor.gui.plots.memory_plot.SERIES`: allocated, reserved, peak or device_used)."""

    name: str
    rank: int
    kind: str


@dataclass(frozen=True)
class RankLayout:
    """The ranks of one run (their devices, by rank) and the buffer columns their lines take."""

    devices: tuple[str, ...]

    @classmethod
    def of_rows(cls, rows: Iterable[Any]) -> RankLayout:
        """The layout rank reports show (objects with `rank` and `device`); ranks not among them are 'unknown'."""
        found = {int(row.rank): str(row.device) for row in rows}
        return cls(tuple(found.get(rank, "unknown") for rank in range(max(found, default=-1) + 1)))

    @property
    def world_size(self) -> int:
        return len(self.devices)

    @property
    def names(self) -> tuple[str, ...]:
        return rank_names(self.devices)

    @property
    def kinds(self) -> tuple[tuple[str, str], ...]:
        """Each rank's lines: the CPU has no caching allocator, so no reserved line."""
        gpu = bool(self.devices) and has_allocator(self.devices[0])
        return tuple(kind for kind in RANK_KINDS if gpu or kind[0] != "reserved")

    @property
    def used_devices(self) -> tuple[str, ...]:
        """Devices with a device-wide used line (NVML's, or the machine's on the CPU): one per device, not
        per rank, in order of their first rank."""
        return tuple(dict.fromkeys(self.devices))

    @property
    def columns(self) -> int:
        return 1 + self.world_size * len(self.kinds) + len(self.used_devices)

    def lines(self) -> list[RankLine]:
        """The lines in column order (column i + 1 is line i's)."""
        gpu = bool(self.devices) and has_allocator(self.devices[0])
        translate = QCoreApplication.translate
        lines = [
            RankLine(translate("rank_series", KIND_NAMES[key][0 if gpu else 1]).format(rank=name), rank, key)
            for rank, name in enumerate(self.names)
            for key, _ in self.kinds
        ]
        for device in self.used_devices:
            name = (
                translate("rank_series", "{device} used (all processes)").format(device=device_name(device))
                if has_allocator(device)
                else translate("rank_series", "system used")
            )
            lines.append(RankLine(name, self.devices.index(device), "device_used"))
        return lines

    def row(self, seconds: float, readings: Mapping[int, Reading]) -> list[float]:
        """One report's row: `readings` by rank (a rank missing, or its device-wide used unknown: NaN, a gap)."""
        values = [seconds]
        nan = float("nan")
        for rank in range(self.world_size):
            reading = readings.get(rank)
            values.extend(nan if reading is None else float(getattr(reading, field)) for _, field in self.kinds)
        for device in self.used_devices:
            used = [
                readings[rank].device_used_bytes
                for rank, d in enumerate(self.devices)
                if d == device and rank in readings and readings[rank].device_used_bytes is not None
            ]
            values.append(float(used[0]) if used else nan)
        return values

    def rows_of_reports(self, rank_rows: Sequence[Any], seconds_by_step: Mapping[int, float]) -> np.ndarray:
        """The store's rank reports (by step, then rank) as rows, each at its report's seconds; rows of a
        step without a known report are left out."""
        out: list[list[float]] = []
        i = 0
        while i < len(rank_rows):
            step = rank_rows[i].step
            readings: dict[int, Any] = {}
            while i < len(rank_rows) and rank_rows[i].step == step:
                readings[int(rank_rows[i].rank)] = rank_rows[i]
                i += 1
            if step in seconds_by_step:
                out.append(self.row(seconds_by_step[step], readings))
        return np.array(out, dtype=np.float64).reshape(-1, self.columns)


def last_speeds(rank_rows: Sequence[Any]) -> dict[int, float | None]:
    """Each rank's images/s at the last step of `rank_rows` (by step, then rank), by rank."""
    if not rank_rows:
        return {}
    step = rank_rows[-1].step
    return {int(row.rank): row.samples_per_s for row in rank_rows if row.step == step}


def speeds_text(names: Sequence[str], speeds: Sequence[float | None]) -> tuple[str, str]:
    """Each rank's images/s for the stats panel, '1,210 · 1,198 img/s', and a tooltip naming each rank (a
    rank whose rate is unknown or not a number: '–'), with the locale's digit grouping."""
    shown = ["–" if s is None or s != s else number(s, 0) for s in speeds]
    labels = [*names, *(rank_name(rank) for rank in range(len(names), len(shown)))]
    translate = QCoreApplication.translate
    return (
        translate("rank_series", "{speeds} img/s").format(speeds=" · ".join(shown)) if shown else "",
        "\n".join(
            translate("rank_series", "{rank}: {speed} images/s").format(rank=label, speed=value)
            for label, value in zip(labels, shown)
        ),
    )
