"""The comparison's step-time split: one row per run, one column per phase (ms per step and its share), the whole
step and what bounds it, so "stream vs resident" shows where each run's time went, not only which was faster.

Each run's figures are the medians over its timed reports after the first (warm-up), as its summary's
`step_phases_s` are (`gpu_train_monitor.engine.step_phases.run_phases`). Hidden until a run has a timed report.
Apart from `gpu_train_monitor.gui.compare.view` to keep that module about the race; its texts keep the view's
translation context ("CompareView"), the phases' names and colours are the Step time tab's.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from gpu_train_monitor.engine.step_phases import run_phases
from gpu_train_monitor.events.events import STEP_PHASES, StepPhases
from gpu_train_monitor.gui.compare.race import Race
from gpu_train_monitor.gui.qt.locale_format import number
from gpu_train_monitor.gui.views.step_phase_text import PHASE_COLOURS, phase_cell, phase_name, shares, verdict_name


def swatch(colour: tuple[int, int, int]) -> QIcon:
    """A small square of `colour`: the phase's (or the run's) colour beside its name."""
    pixmap = QPixmap(10, 10)
    pixmap.fill(QColor(*colour))
    return QIcon(pixmap)


class PhaseSplit(QTableWidget):
    """Each run's split; the view calls `begin`, `add` per timed report, and `draw` when its text is redrawn."""

    def __init__(self) -> None:
        super().__init__(0, len(STEP_PHASES) + 3)
        self.setObjectName("comparePhaseSplit")
        self.reports: dict[int, list[StepPhases]] = {}
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setToolTip(
            QCoreApplication.translate(
                "CompareView",
                "Where each run's step time goes: the medians of its reports after the first (warm-up), "
                "on the host's clock",
            )
        )
        self.say_headers()
        self.hide()

    def say_headers(self) -> None:
        """The column titles, in the user's language."""
        titles = [QCoreApplication.translate("CompareView", "run")]
        titles += [phase_name(phase) for phase in STEP_PHASES]
        titles += [
            QCoreApplication.translate("CompareView", "whole step"),
            QCoreApplication.translate("CompareView", "bound by"),
        ]
        for column, title in enumerate(titles):
            item = QTableWidgetItem(title)
            if 1 <= column <= len(STEP_PHASES):
                item.setIcon(swatch(PHASE_COLOURS[STEP_PHASES[column - 1]]))
            self.setHorizontalHeaderItem(column, item)

    def begin(self, races: Sequence[Race]) -> None:
        """A comparison starts: a row per run, none timed yet (hidden)."""
        self.reports = {race.index: [] for race in races}
        self.setRowCount(0)
        self.hide()

    def add(self, index: int, phases: StepPhases) -> None:
        self.reports.setdefault(index, []).append(phases)

    def split_of(self, index: int) -> StepPhases | None:
        """Run `index`'s split as the row shows it (None before its first timed report)."""
        return run_phases(self.reports.get(index, []))

    def draw(self, races: Sequence[Race]) -> None:
        """Each run's row, from the reports so far; shown once one run has any."""
        splits = [self.split_of(race.index) for race in races]
        if not any(splits):
            self.hide()
            return
        self.setRowCount(len(races))
        for row, (race, split) in enumerate(zip(races, splits)):
            name = QTableWidgetItem(race.label)
            name.setIcon(swatch(race.colour))
            self.setItem(row, 0, name)
            cells = ["–"] * (len(STEP_PHASES) + 2)
            if split is not None:
                cells = [phase_cell(s, share) for s, share in zip(split.seconds, shares(split))]
                cells += [
                    QCoreApplication.translate("CompareView", "{ms} ms").format(ms=number(1000 * split.step_s, 1)),
                    verdict_name(split),
                ]
            for column, text in enumerate(cells, start=1):
                item = QTableWidgetItem(text)
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                self.setItem(row, column, item)
        header = self.horizontalHeader().sizeHint().height()
        self.setFixedHeight(header + len(races) * self.verticalHeader().defaultSectionSize() + 2 * self.frameWidth())
        self.show()

    def cell_text(self, row: int, phase: str) -> str:
        """The text in run `row`'s cell of `phase` (a test's view of the table)."""
        item = self.item(row, 1 + STEP_PHASES.index(phase))
        return "" if item is None else item.text()
