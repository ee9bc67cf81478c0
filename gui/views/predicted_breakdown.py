"""The run's step as it was predicted, beside the step as it was measured, in the memory breakdown tab.

When a run's first breakdown arrives, its config is predicted at its batch size (`gpu_train_monitor.engine.prediction`:
one step traced on tensors without memory) off the GUI thread; then every part's measured value says what was
predicted for it ("12.3 MB (40%) · predicted 11.9 MB") and one line says the error of the predicted peak
against the measured step's total. The dataset a resident placement keeps on the device is no part of a step:
it is left out of the measured total the prediction is compared with.

A watched run (the `watch()` API, a `watch --` script) is predicted in its own process at its first step
(gpu_train_monitor.watch.step_prediction): its recorded `StepPredicted` is set beside its breakdowns the same way, live
and when the run is opened later from the Runs tab.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.events.events import MemoryBreakdown, StepPredicted
from gpu_train_monitor.gui.form.peak_prediction import predict_outcome, problem_text
from gpu_train_monitor.gui.qt.core_text import core_text
from gpu_train_monitor.gui.qt.latest_task import LatestTask
from gpu_train_monitor.gui.qt.locale_format import integer, number
from gpu_train_monitor.memory.like_measured import STEP_PARTS, as_measured, error_percent


def step_bytes(b: MemoryBreakdown) -> int:
    """The measured step's total, without the dataset kept on the device (a prediction has none)."""
    return b.total_bytes - b.dataset_bytes


class PredictedBreakdown(QWidget):
    """`expect(config)` at a run's start; `measured(b, value_labels)` after each breakdown is shown: asks for the
    prediction at the first, then writes it beside the measured values and says the error."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.line = QLabel()
        self.line.setObjectName("predictedVsMeasured")
        self.line.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.line)
        self.task = LatestTask(self, delay_ms=0, thread_name="predict-step")
        self.task.answered.connect(self._on_answered)
        self.task.failed.connect(lambda text: self._on_answered(_Failed(text)))
        self.config: RunConfig | None = None
        self.prediction: Any = None
        self._problem: Any = None
        self._asked = False
        self._recorded: StepPredicted | None = None  # a watched run's, predicted in its process
        self._last: tuple[MemoryBreakdown, dict[str, QLabel]] | None = None
        self.chart: Any = None  # a ModuleChart offered the prediction's rows by module (until a step is measured so)
        self.hide()

    def expect(self, config: RunConfig | None) -> None:
        """A run of `config` starts (None: a run with nothing to predict, a watched script's): its first
        breakdown asks for the prediction."""
        self.forget()
        self.config = config

    def forget(self) -> None:
        self.task.drop()
        self.config, self.prediction, self._problem, self._asked, self._last = None, None, None, False, None
        self._recorded = None
        self.line.clear()
        self.hide()

    def shutdown(self, timeout_ms: int = 30_000) -> bool:
        return self.task.shutdown(timeout_ms)

    def recorded(self, event: StepPredicted) -> None:
        """A watched run's step as its process predicted it (or why it could not): beside its breakdowns, the
        one shown already and the ones to come."""
        self.task.drop()
        self.config, self._asked, self._recorded = None, True, event
        self.prediction = event if event.predicted else None
        self._problem = None if event.predicted else event.reason
        self._offer_modules()
        if self._last is not None:
            self._show(*self._last)

    def measured(self, b: MemoryBreakdown, value_labels: dict[str, QLabel]) -> None:
        """`b` has just been shown in `value_labels` (part key -> its value label): the prediction beside it (a
        watched run's, recorded once its trace is done, may come after its first breakdowns: kept for then)."""
        self._last = (b, value_labels)
        if self.config is None and self._recorded is None:
            return
        if not self._asked:
            self._asked = True
            config = self.config
            self.task.request(lambda _report, _cancelled: predict_outcome(config, None))
            self.line.setText(self.tr("Predicting this step's memory to compare with the measured one…"))
            self.line.setToolTip("")
            self.show()
            return
        self._show(b, value_labels)

    def _on_answered(self, outcome: Any) -> None:
        self.prediction, self._problem = outcome.prediction, outcome.problem
        self._offer_modules()
        if self._last is not None:
            self._show(*self._last)

    def _offer_modules(self) -> None:
        rows = getattr(self.prediction, "modules", ())
        if self.chart is not None and rows:
            self.chart.offer_predicted(rows)

    def _show(self, b: MemoryBreakdown, value_labels: dict[str, QLabel]) -> None:
        self.show()
        p = self.prediction
        if p is None:
            if self._problem is not None:
                short, whole = problem_text(self._problem)
                self.line.setText(self.tr("No prediction of this step to compare with: {reason}").format(reason=short))
                self.line.setToolTip(whole)
            return
        like = as_measured(p, b)  # each part read as the measured step's was, and the totals of the same kind
        for key in STEP_PARTS:
            label = value_labels[key]
            label.setText(
                self.tr("{measured} · predicted {predicted}").format(
                    # no line break inside a size: the label wraps at the dot instead (a narrow window)
                    measured=label.text().replace(" ", "\u00a0"),
                    predicted=format_bytes(like.part(key)).replace(" ", "\u00a0"),
                )
            )
        error = round(error_percent(like.total_bytes, step_bytes(b)), 1)
        signed = ("+" if error >= 0 else "−") + number(abs(error), 1)  # rounded first: no "−0.0"
        if like.total_is_peak:
            line = self.tr("Predicted peak {predicted} against {measured} measured at step {step}: {error}% off")
        else:
            line = self.tr("Predicted step {predicted} against {measured} measured at step {step}: {error}% off")
        self.line.setText(
            line.format(
                predicted=format_bytes(like.total_bytes),
                measured=format_bytes(step_bytes(b)),
                step=integer(b.step),
                error=signed,
            )
        )
        tip = self.tr(
            "The same step predicted without running it: {what}, traced on tensors without memory in {seconds} s. "
            "Each part is predicted as it was measured: gradients once the step is done, activations as {how}."
        ).format(
            what=core_text(p.what),
            seconds=number(p.elapsed_s, 1),
            how=self.tr("the step's peak less the other parts")
            if b.method == "allocator"
            else self.tr("the bytes autograd saved for backward (this device keeps no peak), summed with the others"),
        )
        tip += "\n" + self.tr(
            "The error compares the two totals, in % of the measured one. The predicted peak of live tensors, at one "
            "moment of the step, is {peak}."
        ).format(peak=format_bytes(p.total_bytes))
        if self._recorded is not None:
            tip += "\n" + self.tr(
                "Predicted once in the training process, at step {step}, from its model and the inputs its forward "
                "received. Allocator overhead and the CUDA context are not in it."
            ).format(step=integer(self._recorded.step))
        if b.dataset_bytes:
            tip += "\n" + self.tr(
                "The dataset kept on the device ({size}) is no part of a step: left out of both."
            ).format(size=format_bytes(b.dataset_bytes))
        self.line.setToolTip(tip)


class _Failed:
    """An unexpected error of the prediction, as an outcome: said in one line."""

    def __init__(self, text: str) -> None:
        self.prediction, self.problem = None, (text.splitlines() or [""])[0]
