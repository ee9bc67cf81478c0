"""What holds the memory: a stacked bar of parameters, gradients, optimizer state, the dataset kept on
the device, batch and activations, their sizes, and the peak of each phase of the sampled step.
Updated per report. A data-parallel run samples every rank at the same step: a combo box picks the rank
shown (it is there only when the run has more than one)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Slot
from PySide6.QtWidgets import QComboBox, QFrame, QGridLayout, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.events.events import MemoryBreakdown
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.locale_format import integer, number
from gpu_train_monitor.gui.views.module_chart import ModuleChart
from gpu_train_monitor.gui.views.predicted_breakdown import PredictedBreakdown
from gpu_train_monitor.gui.views.stacked_bar import StackedBar

# (MemoryBreakdown field, name, colour, what it holds); names and tips are translated where shown
PARTS = (
    (
        "params_bytes",
        QT_TRANSLATE_NOOP("breakdown_view", "parameters"),
        palette.TAB_BLUE,
        QT_TRANSLATE_NOOP("breakdown_view", "Weights and buffers of the model"),
    ),
    (
        "grads_bytes",
        QT_TRANSLATE_NOOP("breakdown_view", "gradients"),
        palette.TAB_ORANGE,
        QT_TRANSLATE_NOOP(
            "breakdown_view", "One gradient per trainable parameter, alive from backward to the next step"
        ),
    ),
    (
        "optimizer_bytes",
        QT_TRANSLATE_NOOP("breakdown_view", "optimizer state"),
        palette.TAB_GREEN,
        QT_TRANSLATE_NOOP("breakdown_view", "SGD momentum buffers or AdamW's two moments per parameter"),
    ),
    (
        "dataset_bytes",
        QT_TRANSLATE_NOOP("breakdown_view", "dataset on device"),
        palette.TAB_BROWN,
        QT_TRANSLATE_NOOP(
            "breakdown_view",
            "The resident placement's whole dataset on the device, with the augmented copy each epoch makes",
        ),
    ),
    (
        "batch_bytes",
        QT_TRANSLATE_NOOP("breakdown_view", "batch"),
        palette.TAB_PURPLE,
        QT_TRANSLATE_NOOP("breakdown_view", "The step's input images and labels as the model receives them"),
    ),
    (
        "activations_bytes",
        QT_TRANSLATE_NOOP("breakdown_view", "activations + workspace"),
        palette.TAB_RED,
        QT_TRANSLATE_NOOP(
            "breakdown_view", "Outputs kept for backward and temporary kernel workspace: grows with the batch size"
        ),
    ),
)
OPTIONAL_PARTS = {"dataset_bytes"}  # shown only when non-zero: a streamed dataset holds no device memory
COLUMNS = 3  # parts per grid row
# gpu_train_monitor.events.events.PHASES, as the phase peaks name them
PHASE_NAMES = {
    "forward": QT_TRANSLATE_NOOP("breakdown_view", "forward"),
    "backward": QT_TRANSLATE_NOOP("breakdown_view", "backward"),
    "optimizer": QT_TRANSLATE_NOOP("breakdown_view", "optimizer"),
}


def part_name(key: str) -> str:
    """The translated name of the part held in MemoryBreakdown field `key`."""
    name = next(name for k, name, _, _ in PARTS if k == key)
    return QCoreApplication.translate("breakdown_view", name)


def phase_name(phase: str) -> str:
    """A phase of the step in the user's language (one a newer core adds shows as it is)."""
    name = PHASE_NAMES.get(phase)
    return phase if name is None else QCoreApplication.translate("breakdown_view", name)


class BreakdownView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.last: MemoryBreakdown | None = None  # the one shown
        self.by_rank: dict[int, MemoryBreakdown] = {}  # each rank's latest
        self.device_kind = "cuda"  # "cpu": the memory is the process's (set_device_kind)
        # in a scroll area: in a short tab (a run window's) the wrapped values scroll instead of being cut
        content = QWidget()
        scroll = QScrollArea(self)
        scroll.setWidget(content)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        layout = QVBoxLayout(content)
        top = QHBoxLayout()
        self.title = QLabel(self._title(None))
        top.addWidget(self.title, 1)
        self.rank_label = QLabel(self.tr("Rank"))
        self.rank_box = QComboBox()
        self.rank_box.setObjectName("breakdownRank")
        self.rank_box.setToolTip(
            self.tr("Every rank of a data-parallel run is sampled at the same step: the rank shown")
        )
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
            swatch = QLabel("■", content)
            swatch.setStyleSheet(f"color: rgb{colour}; font-size: 14pt;")
            label = QLabel(QCoreApplication.translate("breakdown_view", name), content)
            value = QLabel("–", content)
            value.setWordWrap(True)  # "380.86 kB (2%) · predicted 380.86 kB" breaks rather than widen the window
            for w in (swatch, label, value):
                w.setToolTip(QCoreApplication.translate("breakdown_view", tip))
            self._cells[key] = (swatch, label, value)
            self.value_labels[key] = value
        layout.addLayout(self.grid)  # first: the cells become this view's children as they are placed
        self._place(set())
        self.phases = QLabel(self.tr("Phase peaks: –"))
        self.phases.setToolTip(
            self.tr(
                "Highest allocated memory in each phase of the sampled step "
                "(on the CPU and MPS: memory at the end of each phase)"
            )
        )
        self.phases.setWordWrap(True)
        layout.addWidget(self.phases)
        self.note = QLabel()
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        self.predicted = PredictedBreakdown(self)  # the run's step predicted, beside the measured values
        layout.addWidget(self.predicted)
        self.modules = ModuleChart(content)  # which modules hold it: measured on a few steps, else predicted
        self.predicted.chart = self.modules
        layout.addWidget(self.modules)
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
        self.predicted.forget()
        self.modules.clear()
        self.by_rank.clear()
        self.set_ranks(())
        self._blank()

    def _blank(self) -> None:
        self.last = None
        self._place(set())
        self.bar.set_values([])
        for label in self.value_labels.values():
            label.setText("–")
        self.phases.setText(self.tr("Phase peaks: –"))
        self.note.setText("")

    def show_breakdown(self, b: MemoryBreakdown) -> None:
        """Rank `b.rank`'s latest: shown when that rank is the one picked."""
        self.by_rank[b.rank] = b
        if b.rank >= self.rank_box.count() and b.rank > 0:  # ranks not announced: named by number
            names = [self.rank_box.itemText(i) for i in range(self.rank_box.count())]
            self.set_ranks(names + [self.tr("rank {rank}").format(rank=r) for r in range(len(names), b.rank + 1)])
        if b.rank == self.rank:
            self._display(b)

    @Slot(int)
    def _on_rank_picked(self, _index: int) -> None:
        self._show_rank()

    def _show_rank(self) -> None:
        """The picked rank's latest breakdown (none yet: blank), titled with the rank when there are several."""
        several = self.rank_box.count() > 1
        self.title.setText(self._title(self.rank_box.currentText() if several else None))
        b = self.by_rank.get(self.rank)
        if b is None:
            self._blank()
        elif b is not self.last:
            self._display(b)

    def _display(self, b: MemoryBreakdown) -> None:
        self.last = b
        self._place({key for key in OPTIONAL_PARTS if getattr(b, key)})
        self.bar.set_values(
            [(part_name(key), getattr(b, key), colour) for key, _, colour, _ in PARTS if self.is_shown(key)]
        )
        total = b.total_bytes
        for key, label in self.value_labels.items():
            value = getattr(b, key)
            if total:
                label.setText(
                    self.tr("{size} ({share}%)").format(size=format_bytes(value), share=number(100 * value / total, 0))
                )
            else:
                label.setText(format_bytes(value))
        self.predicted.measured(b, self.value_labels)
        if b.modules:
            self.modules.show_measured(b.modules, b.step)
        peaks = self.tr(", ").join(f"{phase_name(phase)} {format_bytes(v)}" for phase, v in b.phase_peaks)
        if peaks:
            self.phases.setText(
                self.tr("Phase peaks at step {step}: {peaks}").format(step=integer(b.step), peaks=peaks)
            )
        else:  # a watched script's loop: only its optimizer steps are seen, not its phases
            self.phases.setText(
                self.tr("Measured at step {step}, as a whole: a script's own loop shows no phases").format(
                    step=integer(b.step)
                )
            )
        if b.method == "allocator":
            self.note.setText(self.tr("Activations + workspace = the step's allocator peak minus everything else."))
        else:
            self.note.setText(
                self.tr(
                    "No allocator peak counters on this device: activations are the bytes autograd "
                    "saved for backward; phase values are the process's memory at each phase's end."
                )
            )

    def show_again(self) -> None:
        """The breakdown shown, its title and texts said again (after a language change: new words and locale)."""
        self.set_device_kind(self.device_kind)
        self.modules.show_again()
        if self.last is not None:
            self._display(self.last)

    def tab_title(self) -> str:
        """The title of the tab that shows this view. On the CPU the memory is the process's: Chinese says 内存
        there and 显存 (a GPU's memory) on a GPU, so the CPU's texts are translated apart."""
        if self.device_kind == "cpu":
            return self.tr("Memory breakdown", "on the CPU: the process's memory")
        return self.tr("Memory breakdown")

    def set_device_kind(self, kind: str) -> None:
        """Say the memory the way `kind`'s ("cpu", "cuda", "mps") is called."""
        self.device_kind = kind
        several = self.rank_box.count() > 1
        self.title.setText(self._title(self.rank_box.currentText() if several else None))

    def _title(self, rank: str | None) -> str:
        """The view's title; `rank`: the rank shown, named, when the run has several."""
        if self.device_kind == "cpu":
            # lupdate reads a trailing comma after the comment as a third (plural) argument: written by hand
            # fmt: off
            if rank is None:
                return self.tr("Memory of one training step, by what holds it (sampled once per report)",
                               "on the CPU: the process's memory")
            return self.tr("Memory of one training step on {rank}, by what holds it (sampled once per report)",
                           "on the CPU: the process's memory").format(rank=rank)
            # fmt: on
        if rank is None:
            return self.tr("Memory of one training step, by what holds it (sampled once per report)")
        return self.tr("Memory of one training step on {rank}, by what holds it (sampled once per report)").format(
            rank=rank
        )
