"""What holds the memory: a stacked bar of parameters, gradients, optimizer state, the dataset kept on
the device, batch and activations, their sizes, and the peak of each phase of the sampled step.
Updated per report. A data-parallel run samples every rank at the same step: a combo box picks the rank
shown (it is there only when the run has more than one)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QRectF, Qt, Slot
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QComboBox, QGridLayout, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from core.events import MemoryBreakdown
from core.units import format_bytes

PARTS = (
    ("params_bytes", "parameters", (31, 119, 180), "Weights and buffers of the model"),
    ("grads_bytes", "gradients", (255, 127, 14), "One gradient per trainable parameter, alive from backward to the next step"),
    ("optimizer_bytes", "optimizer state", (44, 160, 44), "SGD momentum buffers or AdamW's two moments per parameter"),
    ("dataset_bytes", "dataset on device", (140, 86, 75),
     "The resident placement's whole dataset on the device, with the augmented copy each epoch makes"),
    ("batch_bytes", "batch", (148, 103, 189), "The step's input images and labels as the model receives them"),
    ("activations_bytes", "activations + workspace", (214, 39, 40),
     "Outputs kept for backward and temporary kernel workspace: grows with the batch size"),
)
OPTIONAL_PARTS = {"dataset_bytes"}  # shown only when non-zero: a streamed dataset holds no device memory
COLUMNS = 3  # parts per grid row
TITLE = "Memory of one training step{on}, by what holds it (sampled once per report)"


class StackedBar(QWidget):
    """A horizontal bar split into the breakdown's parts, proportional to their bytes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.values: list[tuple[str, int, tuple[int, int, int]]] = []
        self.setMinimumHeight(28)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_values(self, values: list[tuple[str, int, tuple[int, int, int]]]) -> None:
        self.values = values
        total = sum(v for _, v, _ in values)
        self.setToolTip("\n".join(f"{name}: {format_bytes(v)} ({v / total:.0%})" for name, v, _ in values)
                        if total else "")
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        rect = self.rect().adjusted(0, 2, -1, -2)
        painter.setPen(QColor(160, 160, 160))
        painter.drawRect(rect)
        total = sum(v for _, v, _ in self.values)
        if not total:
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, "no step measured yet")
            return
        x = float(rect.left())
        for _, value, colour in self.values:
            width = rect.width() * value / total
            painter.fillRect(QRectF(x, rect.top(), width, rect.height()), QColor(*colour))
            x += width


class BreakdownView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.last: MemoryBreakdown | None = None  # the one shown
        self.by_rank: dict[int, MemoryBreakdown] = {}  # each rank's latest
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        self.title = QLabel(TITLE.format(on=""))
        top.addWidget(self.title, 1)
        self.rank_label = QLabel("Rank")
        self.rank_box = QComboBox()
        self.rank_box.setObjectName("breakdownRank")
        self.rank_box.setToolTip("Every rank of a data-parallel run is sampled at the same step: the rank shown")
        self.rank_box.currentIndexChanged.connect(self._on_rank_picked)
        self.rank_label.setBuddy(self.rank_box)
        for w in (self.rank_label, self.rank_box):
            top.addWidget(w)
            w.hide()
        layout.addLayout(top)
        self.bar = StackedBar()
        layout.addWidget(self.bar)
        self.grid = QGridLayout()
        self.value_labels: dict[str, QLabel] = {}
        self._cells: dict[str, tuple[QLabel, QLabel, QLabel]] = {}  # swatch, name, value of each part
        self._shown_optional: set[str] | None = None
        for key, name, colour, tip in PARTS:
            swatch = QLabel("■", self)
            swatch.setStyleSheet(f"color: rgb{colour}; font-size: 14pt;")
            label = QLabel(name, self)
            value = QLabel("–", self)
            for w in (swatch, label, value):
                w.setToolTip(tip)
            self._cells[key] = (swatch, label, value)
            self.value_labels[key] = value
        layout.addLayout(self.grid)  # first: the cells become this view's children as they are placed
        self._place(set())
        self.phases = QLabel("Phase peaks: –")
        self.phases.setToolTip("Highest allocated memory in each phase of the sampled step "
                               "(on the CPU and MPS: memory at the end of each phase)")
        layout.addWidget(self.phases)
        self.note = QLabel()
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        layout.addStretch(1)

    def _place(self, shown_optional: set[str]) -> None:
        """Lay the shown parts out in order, COLUMNS to a row, so a hidden one leaves no gap."""
        if shown_optional == self._shown_optional:
            return  # per report: nothing to move
        self._shown_optional = shown_optional
        position = 0
        for key, *_ in PARTS:
            shown = key not in OPTIONAL_PARTS or key in shown_optional
            for column, widget in enumerate(self._cells[key]):
                self.grid.removeWidget(widget)  # it stays this view's child
                if shown:
                    self.grid.addWidget(widget, position // COLUMNS, COLUMNS * (position % COLUMNS) + column)
                widget.setHidden(not shown)
            position += shown

    def is_shown(self, key: str) -> bool:
        """Whether a part's row is part of the view (a hidden window counts as shown)."""
        return not self._cells[key][2].isHidden()

    @property
    def rank(self) -> int:
        """The rank shown (0 for an ordinary run)."""
        return max(self.rank_box.currentIndex(), 0)

    def set_ranks(self, names: Sequence[str]) -> None:
        """A data-parallel run's ranks, by rank ('GPU 1'); fewer than two: no rank choice."""
        if list(names) == [self.rank_box.itemText(i) for i in range(self.rank_box.count())]:
            return
        shown = self.rank
        self.rank_box.blockSignals(True)  # one redisplay below, not one per item
        self.rank_box.clear()
        self.rank_box.addItems(list(names))
        self.rank_box.setCurrentIndex(shown if shown < len(names) else 0)
        self.rank_box.blockSignals(False)
        for w in (self.rank_label, self.rank_box):
            w.setVisible(len(names) > 1)
        self._show_rank()

    def clear(self) -> None:
        self.by_rank.clear()
        self.set_ranks(())
        self._blank()

    def _blank(self) -> None:
        self.last = None
        self._place(set())
        self.bar.set_values([])
        for label in self.value_labels.values():
            label.setText("–")
        self.phases.setText("Phase peaks: –")
        self.note.setText("")

    def show_breakdown(self, b: MemoryBreakdown) -> None:
        """Rank `b.rank`'s latest: shown when that rank is the one picked."""
        self.by_rank[b.rank] = b
        if b.rank >= self.rank_box.count() and b.rank > 0:  # ranks not announced: named by number
            names = [self.rank_box.itemText(i) for i in range(self.rank_box.count())]
            self.set_ranks(names + [f"rank {r}" for r in range(len(names), b.rank + 1)])
        if b.rank == self.rank:
            self._display(b)

    @Slot(int)
    def _on_rank_picked(self, _index: int) -> None:
        self._show_rank()

    def _show_rank(self) -> None:
        """The picked rank's latest breakdown (none yet: blank), titled with the rank when there are several."""
        several = self.rank_box.count() > 1
        self.title.setText(TITLE.format(on=f" on {self.rank_box.currentText()}" if several else ""))
        b = self.by_rank.get(self.rank)
        if b is None:
            self._blank()
        elif b is not self.last:
            self._display(b)

    def _display(self, b: MemoryBreakdown) -> None:
        self.last = b
        self._place({key for key in OPTIONAL_PARTS if getattr(b, key)})
        self.bar.set_values([(name, getattr(b, key), colour) for key, name, colour, _ in PARTS
                             if self.is_shown(key)])
        total = b.total_bytes
        for key, label in self.value_labels.items():
            value = getattr(b, key)
            label.setText(f"{format_bytes(value)} ({value / total:.0%})" if total else format_bytes(value))
        self.phases.setText(f"Phase peaks at step {b.step}: " +
                            ", ".join(f"{phase} {format_bytes(v)}" for phase, v in b.phase_peaks))
        self.note.setText(
            "Activations + workspace = the step's allocator peak minus everything else." if b.method == "allocator"
            else "No allocator peak counters on this device: activations are the bytes autograd saved for "
                 "backward; phase values are the process's memory at each phase's end.")
