"""Will it fit? The form's settings' predicted memory peak, beside the batch size: "predicted peak 1.20 GB of
24.0 GB: fits (21.6 GB to spare)".

On the CPU the line agrees with the batch-size finder: the capacity is what a trial may use now
(`gpu_train_monitor.finder.budget.cpu_trial_bytes`: what other programs and this app leave, never the machine's total),
and the peak counts the process's own memory (Python, PyTorch's libraries: `gpu_train_monitor.finder.budget.own_bytes`)
beside the step's.

The peak is `gpu_train_monitor.engine.prediction.predict`'s (one training step traced on tensors without memory), worked
out off the GUI thread (`gpu_train_monitor.gui.qt.latest_task`) once the settings that change memory have been still for
a moment, so typing a batch size never waits for it, and an answer to settings changed meanwhile is never shown. Torch
loads behind the window: until it has, the line says it waits. A step that cannot be traced says why in a few words,
the whole reason in the tooltip.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Qt
from PySide6.QtWidgets import QFormLayout, QLabel

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.base.text import Message, format_bytes
from gpu_train_monitor.config.bounds import FINDER_BOUNDS
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.config.sequences import TEXT_FIELDS
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.core_text import core_text, error_text
from gpu_train_monitor.gui.qt.latest_task import LatestTask
from gpu_train_monitor.gui.qt.locale_format import integer, number

# the settings that change one step's memory: a change of any other (the learning rate) asks nothing again
MEMORY_FIELDS = (
    "model",
    "batch_size",
    "amp",
    "channels_last",
    "optimizer",
    "activation_checkpointing",
    "fused_optimizer",
    "device",
    "dataset",
    "data_dir",
    "nproc",
    *TEXT_FIELDS,  # a text run's sequence length and its GPT's size
)
TIGHT_FRACTION = float(FINDER_BOUNDS["margin"].default)  # less free than this share is tight: the finder's margin
SHORT_REASON_CHARACTERS = 90  # the line's why; the tooltip has all of it


@dataclass(frozen=True)
class PredictionOutcome:
    """What a prediction job brings back: the prediction, or why there is none (a Message or a UserError,
    translated in the GUI thread)."""

    prediction: Any = None  # gpu_train_monitor.memory.predict.Prediction
    problem: Any = None


def predict_outcome(config: RunConfig, device_kind: str, batch_size: int | None = None, **overrides: Any) -> Any:
    """`gpu_train_monitor.engine.prediction.predict` for a background thread: the prediction, or why there is none."""
    from gpu_train_monitor.engine.prediction import predict
    from gpu_train_monitor.memory.predict import PredictionUnavailable

    try:
        return PredictionOutcome(predict(config, batch_size, device=device_kind, **overrides))
    except PredictionUnavailable as exc:
        return PredictionOutcome(problem=exc.reason)
    except UserError as exc:
        return PredictionOutcome(problem=exc)


def problem_text(problem: Any) -> tuple[str, str]:
    """(a few words, the whole reason) of why there is no prediction, in the user's language."""
    if isinstance(problem, BaseException):
        whole = error_text(problem)
        short = whole
    else:
        whole = core_text(problem)
        inner = problem.params.get("reason") if isinstance(problem, Message) else None
        short = core_text(inner) if inner is not None else whole
    if len(short) > SHORT_REASON_CHARACTERS:
        short = short[: SHORT_REASON_CHARACTERS - 1].rstrip() + "…"
    return short, whole


def size(n: int | None) -> str:
    """`format_bytes` with its number and unit kept on one line where a label wraps."""
    return format_bytes(n).replace(" ", "\u00a0")


def verdict(need_bytes: int, capacity_bytes: int) -> str:
    """'fits', 'tight' (less than TIGHT_FRACTION of the capacity left) or 'does not fit'."""
    if need_bytes > capacity_bytes:
        return "does not fit"
    if capacity_bytes - need_bytes < TIGHT_FRACTION * capacity_bytes:
        return "tight"
    return "fits"


def own_bytes(device_kind: str) -> int:
    """What a process that trains holds besides the step, where the step's device is that process's memory (the
    CPU's): counted as the finder counts it. 0 on a GPU, whose memory the process's own does not take."""
    if device_kind != "cpu":
        return 0
    from gpu_train_monitor.finder.budget import own_bytes as cpu_own_bytes

    return cpu_own_bytes()


def process_bytes(prediction: Any, device_kind: str) -> int:
    """One process's peak on the device: the step's total, and on the CPU the process's own memory."""
    return prediction.total_bytes + own_bytes(device_kind)


def needed_bytes(prediction: Any, nproc: int, device_kind: str) -> int:
    """What the capacity must hold: one process's peak, or all of them where they share it (the CPU's)."""
    return process_bytes(prediction, device_kind) * (nproc if device_kind == "cpu" else 1)


def usable_capacity(device_capacity: int | None, device_kind: str) -> int | None:
    """The capacity the verdict is against: the device's; on the CPU never more than what a trial may use now
    (the figure the finder plans with), not the machine's total."""
    if device_kind != "cpu":
        return device_capacity
    from gpu_train_monitor.finder.budget import cpu_trial_bytes

    available = cpu_trial_bytes()
    return available if device_capacity is None else min(device_capacity, available)


def verdict_text(need_bytes: int, capacity_bytes: int) -> tuple[str, str]:
    """(the verdict in words with its margin, the colour it is shown in)."""
    found = verdict(need_bytes, capacity_bytes)
    spare = size(capacity_bytes - need_bytes)
    if found == "fits":
        return QCoreApplication.translate("PeakPrediction", "fits ({spare} to spare)").format(spare=spare), palette.GOOD
    if found == "tight":
        return (
            QCoreApplication.translate("PeakPrediction", "tight (only {spare} to spare, under {share}%)").format(
                spare=spare, share=integer(round(100 * TIGHT_FRACTION))
            ),
            palette.WARNING,
        )
    over = size(need_bytes - capacity_bytes)
    return QCoreApplication.translate("PeakPrediction", "does not fit ({over} over)").format(over=over), palette.ERROR


def peak_text(prediction: Any, capacity_bytes: int | None, nproc: int, device_kind: str) -> str:
    """The line beside the batch size, as rich text (the verdict coloured)."""
    peak, capacity = size(process_bytes(prediction, device_kind)), size(capacity_bytes)
    if nproc > 1 and device_kind == "cpu":
        head = QCoreApplication.translate(
            "PeakPrediction", "predicted peak {peak} per process, {total} for {processes}, of {capacity}"
        ).format(
            peak=peak,
            total=size(needed_bytes(prediction, nproc, device_kind)),
            processes=integer(nproc),
            capacity=capacity,
        )
    elif nproc > 1:
        head = QCoreApplication.translate("PeakPrediction", "predicted peak {peak} per GPU of {capacity}").format(
            peak=peak, capacity=capacity
        )
    elif capacity_bytes is None:
        return html.escape(QCoreApplication.translate("PeakPrediction", "predicted peak {peak}").format(peak=peak))
    else:
        head = QCoreApplication.translate("PeakPrediction", "predicted peak {peak} of {capacity}").format(
            peak=peak, capacity=capacity
        )
    if capacity_bytes is None:
        return html.escape(head)
    words, colour = verdict_text(needed_bytes(prediction, nproc, device_kind), capacity_bytes)
    return QCoreApplication.translate("PeakPrediction", "{head}: {verdict}").format(
        head=html.escape(head), verdict=f'<span style="color:{colour}">{html.escape(words)}</span>'
    )


def peak_tooltip(prediction: Any, device_kind: str) -> str:
    """What the prediction counted and what it leaves out."""
    counted = QCoreApplication.translate(
        "PeakPrediction",
        "One training step at its peak: {what}, traced on tensors without memory in {seconds} s (no memory used). "
        "Parameters {params}, gradients {grads}, optimizer state {optimizer}, batch {batch}, activations and "
        "temporaries {activations}.",
    ).format(
        what=core_text(prediction.what),
        seconds=number(prediction.elapsed_s, 1),
        params=format_bytes(prediction.params_bytes),
        grads=format_bytes(prediction.grads_bytes),
        optimizer=format_bytes(prediction.optimizer_bytes),
        batch=format_bytes(prediction.batch_bytes),
        activations=format_bytes(prediction.activations_bytes),
    )
    if device_kind == "cpu":
        left_out = QCoreApplication.translate(
            "PeakPrediction",
            "Counted too: the process's own memory (Python, PyTorch's libraries), {own}. Against the memory "
            "available now (what other programs and this app leave), as the batch-size finder plans. Not counted: "
            "the dataset.",
        ).format(own=format_bytes(own_bytes(device_kind)))
    else:
        left_out = QCoreApplication.translate(
            "PeakPrediction", "Not counted: the CUDA context and the allocator's cache, a few hundred MB more on a GPU."
        )
    tight = QCoreApplication.translate(
        "PeakPrediction", "Tight: less than {share}% of the capacity would be left."
    ).format(share=integer(round(100 * TIGHT_FRACTION)))
    return "\n".join((counted, left_out, tight))


def add_peak_row(form: QFormLayout) -> QLabel:
    """The row under the batch size that shows the prediction: its value label."""
    title = QLabel(QCoreApplication.translate("PeakPrediction", "Memory"))
    title.setToolTip(
        QCoreApplication.translate(
            "PeakPrediction", "The memory one training step of these settings needs at its peak, predicted"
        )
    )
    value = QLabel()
    value.setObjectName("predictedPeak")
    value.setWordWrap(True)
    value.setTextFormat(Qt.TextFormat.RichText)
    title.setBuddy(value)
    form.addRow(title, value)
    return value


Predictor = Callable[[RunConfig, str], Any]  # (config, device kind) -> PredictionOutcome, run off the GUI thread


class PeakPrediction(QObject):
    """Keeps `label` saying the form's predicted peak against `capacity()` (the selected device's bytes, None
    when unknown). `settings_changed()` after any change of the form; `torch_ready()` once torch has loaded."""

    def __init__(
        self,
        form: Any,
        label: QLabel,
        capacity: Callable[[], int | None],
        parent: QObject | None = None,
        predictor: Predictor = predict_outcome,
    ) -> None:
        super().__init__(parent)
        self.form, self.label, self.capacity, self.predictor = form, label, capacity, predictor
        self.prediction: Any = None  # the prediction shown, for the settings of `_key`
        self._problem: Any = None
        self._key: tuple[Any, ...] | None = None  # the memory settings asked about last
        self._kind, self._nproc = "cpu", 1
        self._ready = False
        self._running = False
        self.task = LatestTask(self, thread_name="predict-peak")
        self.task.answered.connect(self._on_answered)
        self.task.failed.connect(self._on_failed)
        self._say(QCoreApplication.translate("PeakPrediction", "predicted peak: waiting for PyTorch to load…"))

    def torch_ready(self) -> None:
        self._ready = True
        self.settings_changed()

    def set_running(self, running: bool) -> None:
        """A run trains (the form is locked): nothing new is worked out meanwhile, as it would take the CPU from
        the run and change its speed; an answer not come yet is asked for again once it has ended."""
        if running == self._running:
            return
        self._running = running
        if running:
            if self.task.waiting:  # not started yet (one started answers the locked settings: it goes on)
                self.task.drop()
                self._key = None  # asked again at the end
                if self.prediction is None and self._problem is None:
                    self._say(QCoreApplication.translate("PeakPrediction", "predicted peak: worked out after the run"))
        else:
            self.settings_changed()

    def shutdown(self, timeout_ms: int = 30_000) -> bool:
        return self.task.shutdown(timeout_ms)

    def settings_changed(self) -> None:
        """Ask again when a setting that changes memory has changed (after a quiet moment); else show the
        same answer against the capacity now."""
        if not self._ready or self._running:
            return
        if not self.form.valid:  # the form says what is wrong: no prediction of settings that cannot run
            self.task.drop()
            self._key, self.prediction, self._problem = None, None, None
            self._say("")
            return
        values = self.form.values()
        kind = self.form.device_kind()
        key = (tuple(values[field] for field in MEMORY_FIELDS), kind)
        if key == self._key:
            self.show_again()
            return
        self._key, self._kind, self._nproc = key, kind, int(values["nproc"])
        config = RunConfig(**values)
        self.task.request(lambda _report, _cancelled: self.predictor(config, kind))
        if self.prediction is None and self._problem is None:
            self._say(QCoreApplication.translate("PeakPrediction", "predicted peak: working it out…"))
        self.label.setEnabled(False)  # the last answer, greyed out, until the new one comes

    def _on_answered(self, outcome: Any) -> None:  # the latest request's: nothing newer waits
        self.prediction, self._problem = outcome.prediction, outcome.problem
        self.show_again(current=True)

    def _on_failed(self, text: str) -> None:  # a bug of ours, not the settings: said in one line
        self.prediction, self._problem = None, (text.splitlines() or [""])[0]
        self.show_again(current=True)

    def show_again(self, current: bool | None = None) -> None:
        """The answer held, said again (the capacity may have changed; or the language). `current`: whether it
        answers the settings shown (default: unless a newer question is being worked out); greyed out if not."""
        if not self._ready:
            self._say(QCoreApplication.translate("PeakPrediction", "predicted peak: waiting for PyTorch to load…"))
            return
        self.label.setEnabled(not self.task.busy if current is None else current)
        if self.prediction is not None:
            capacity = usable_capacity(self.capacity(), self._kind)
            self.label.setText(peak_text(self.prediction, capacity, self._nproc, self._kind))
            self.label.setToolTip(peak_tooltip(self.prediction, self._kind))
        elif self._problem is not None:
            short, whole = problem_text(self._problem)
            self.label.setText(
                html.escape(
                    QCoreApplication.translate("PeakPrediction", "no prediction: {reason}").format(reason=short)
                )
            )
            self.label.setToolTip(whole)

    def _say(self, text: str) -> None:
        self.label.setEnabled(True)
        self.label.setText(html.escape(text))
        self.label.setToolTip("")
