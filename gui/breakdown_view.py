"""What holds the memory: a stacked bar of parameters, gradients, optimizer state, the dataset kept on
the device, batch and activations, their sizes, and the peak of each phase of the sampled step.
Updated per report."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

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
        self.last: MemoryBreakdown | None = None
        layout = QVBoxLayout(self)
        self.title = QLabel("Memory of one training step, by what holds it (sampled once per report)")
        layout.addWidget(self.title)
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

    def clear(self) -> None:
        self.last = None
        self._place(set())
        self.bar.set_values([])
        for label in self.value_labels.values():
            label.setText("–")
        self.phases.setText("Phase peaks: –")
        self.note.setText("")

    def show_breakdown(self, b: MemoryBreakdown) -> None:
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
