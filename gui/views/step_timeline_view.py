"""The step's memory over time, in the memory breakdown tab: the bytes live across one training step (forward rising,
backward falling, the optimizer) stacked by holder, or coloured by the block of the model running (a check box).

Two sources, the measured one preferred: on CUDA a run records the allocator's history for its attributed steps
(the second sampled step, then about one a minute; gpu_train_monitor.memory.allocator_timeline) and each such
breakdown carries its timeline; until one arrives, and on every other device, the step as the run's prediction traced
it (the prediction the tab already makes off the GUI thread) is shown, said as such.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from gpu_train_monitor.events.step_timeline import StepTimeline
from gpu_train_monitor.gui.plots.step_timeline_plot import Colour, StepTimelinePlot
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.locale_format import integer

# (HOLDERS key, colour) bottom to top, the colours the breakdown's bar gives the same parts
HOLDER_COLOURS: tuple[tuple[str, Colour], ...] = (
    ("params_bytes", palette.TAB_BLUE),
    ("grads_bytes", palette.TAB_ORANGE),
    ("optimizer_bytes", palette.TAB_GREEN),
    ("batch_bytes", palette.TAB_PURPLE),
    ("activations_bytes", palette.TAB_RED),
    ("temporaries_bytes", palette.TAB_CYAN),
)


class StepTimelineView(QWidget):
    """`offer_predicted(t, batch)` (a run's prediction), `show_measured(t, step)` (a CUDA step's), `clear()` at a new
    run, `set_device_kind(kind)`, `show_again()` after a language change. `part_name` and `phase_name` say a holder
    and a phase as the breakdown says them."""

    def __init__(
        self, part_name: Callable[[str], str], phase_name: Callable[[str], str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.part_name = part_name
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.by_module = QCheckBox()
        self.by_module.setObjectName("timelineByModule")
        self.by_module.toggled.connect(self._on_by_module)
        self.note = QLabel()
        self.note.setObjectName("timelineNote")
        self.note.setWordWrap(True)
        self.plot = StepTimelinePlot(self._holders(), phase_name)
        top = QHBoxLayout()
        top.addWidget(self.caption, 1)
        top.addWidget(self.by_module)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.note)
        layout.addWidget(self.plot)
        self.device_kind = "cuda"
        self.predicted: tuple[StepTimeline, int] | None = None  # (timeline, batch size)
        self.measured: tuple[StepTimeline, int] | None = None  # (timeline, step)
        self._say()
        self.hide()

    def _holders(self) -> list[tuple[str, str, Colour]]:
        names = {
            "activations_bytes": self.tr("activations (saved for backward)"),
            "temporaries_bytes": self.tr("temporaries"),
        }
        return [(key, names.get(key) or self.part_name(key), colour) for key, colour in HOLDER_COLOURS]

    def clear(self) -> None:
        self.predicted = self.measured = None
        self.plot.set_timeline(StepTimeline())
        self.hide()

    def offer_predicted(self, timeline: StepTimeline, batch_size: int) -> None:
        """A prediction's timeline: shown while no measured one has come."""
        if not timeline.points:
            return
        self.predicted = (timeline, batch_size)
        if self.measured is None:
            self.plot.set_timeline(timeline)
            self._say()
            self.show()

    def show_measured(self, timeline: StepTimeline, step: int) -> None:
        if not timeline.points:
            return
        self.measured = (timeline, step)
        self.plot.set_timeline(timeline)
        self._say()
        self.show()

    def set_device_kind(self, kind: str) -> None:
        self.device_kind = kind
        self._say()

    def show_again(self) -> None:
        """Said again in the language now chosen."""
        self.plot.set_names(self._holders())
        self._say()

    def _say(self) -> None:
        self.by_module.setText(self.tr("Colour by module"))
        self.by_module.setToolTip(
            self.tr("Colour the step by the block of the model running at each moment instead of by what holds it")
        )
        if self.measured is not None:
            self.caption.setText(
                self.tr("The step's memory over time, measured at step {step} (the allocator's history)").format(
                    step=integer(self.measured[1])
                )
            )
        elif self.predicted is not None:
            self.caption.setText(
                self.tr("The step's memory over time, predicted at batch {batch}").format(
                    batch=integer(self.predicted[1])
                )
            )
        if self.device_kind != "cuda":
            self.note.setText(
                self.tr(
                    "The measured timeline is CUDA only (it is read from the CUDA allocator's history): this is "
                    "the predicted one."
                )
            )
        elif self.measured is None:
            self.note.setText(
                self.tr(
                    "Predicted until a step is measured: on CUDA the run records the allocator's history for its "
                    "second sampled step, then for one step a minute."
                )
            )
        else:
            self.note.setText("")
        self.note.setVisible(bool(self.note.text()))

    @Slot(bool)
    def _on_by_module(self, on: bool) -> None:
        self.plot.set_by_module(on)
