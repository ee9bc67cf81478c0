"""One way to show a run's events, whether it is watched live (`gpu_train_monitor.gui.views.run_view`) or opened later
from the run store (`gpu_train_monitor.gui.history.run_window`): the same log lines, in the sentences of
`gpu_train_monitor.events.event_text`, and the same marks on the plots, so a run reads the same either way. Also the
words of a run's config, for its log and its Config tab. Everything is in the user's language.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from gpu_train_monitor.config.sequences import TEXT_FIELDS, is_text_dataset
from gpu_train_monitor.events import event_text
from gpu_train_monitor.events.events import (
    CacheCleared,
    CheckpointSaved,
    EpochEnded,
    LogMessage,
    MemoryBreakdown,
    OutOfMemory,
    RunPaused,
    RunResumed,
    RunStarted,
    SnapshotSaved,
    StepPredicted,
    StepsReported,
)
from gpu_train_monitor.gui.form.text import LABELS, NONE_TEXT, label, none_text
from gpu_train_monitor.gui.i18n.status_text import status_text
from gpu_train_monitor.gui.plots.loss_plot import LossPlot
from gpu_train_monitor.gui.plots.memory_plot import MemoryPlot
from gpu_train_monitor.gui.qt.core_text import choice_text, core_text
from gpu_train_monitor.gui.qt.locale_format import integer
from gpu_train_monitor.gui.views.breakdown_view import BreakdownView
from gpu_train_monitor.gui.views.log_panel import LogPanel
from gpu_train_monitor.gui.views.step_time_view import StepTimeView


def shown_value(value: Any) -> str:
    """A recorded value for people: yes, no and 'not set' in the user's language (JSON's true, false and
    null would be English); nested values as compact JSON with the same words."""
    if value is None:
        return QCoreApplication.translate("run_view", "not set")
    if isinstance(value, bool):
        return QCoreApplication.translate("run_view", "yes") if value else QCoreApplication.translate("run_view", "no")
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{name}: {_config_value(name, item)}" for name, item in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(shown_value(item) for item in value) + "]"
    return str(value)


# the fields a watched run's config has besides the form's (gpu_train_monitor.watch.run_facts, .script): their
# names for people, as the form's labels are
WATCHED_LABELS = {
    "source": QT_TRANSLATE_NOOP("run_view", "Trained by"),
    "name": QT_TRANSLATE_NOOP("run_view", "Name"),
    "total_steps": QT_TRANSLATE_NOOP("run_view", "Total steps"),
    "script": QT_TRANSLATE_NOOP("run_view", "Script"),
    "module": QT_TRANSLATE_NOOP("run_view", "Module"),
    "argv": QT_TRANSLATE_NOOP("run_view", "Arguments"),
    "counted": QT_TRANSLATE_NOOP("run_view", "Counted"),
}
# what a watched run's images/s count (gpu_train_monitor.watch.step_samples: a batch's samples, or its tokens)
COUNTED = {"samples": QT_TRANSLATE_NOOP("run_view", "samples"), "tokens": QT_TRANSLATE_NOOP("run_view", "tokens")}


def field_label(name: str, config: Mapping[str, Any]) -> str:
    """A config field's name for people: the form's label, a watched run's own field's, else the name as it is
    (a field of a newer version)."""
    if name in WATCHED_LABELS and watched(config):
        return QCoreApplication.translate("run_view", WATCHED_LABELS[name])
    return label(name) if name in LABELS else name


def watched(config: Mapping[str, Any]) -> bool:
    """Whether `config` is a watched run's (its `source` names who trains it: a script, the watch API...)."""
    return config.get("source") in event_text.WATCHED_SOURCES


def config_text(config: Mapping[str, Any]) -> str:
    """Every field of a run's config as `label=value`, for the log: in the form's words, names and values
    alike (batch size, off, yes in the user's language); values that are names (resnet18, cuda:0) as they are. The
    fields only a text run uses (its sequence length, a GPT's size) are left out of an image run's."""
    text = is_text_dataset(str(config.get("dataset", "")))
    return QCoreApplication.translate("run_view", ", ", "between the fields of the logged config").join(
        f"{field_label(name, config)}={_config_value(name, value, watched(config))}"
        for name, value in config.items()
        if text or name not in TEXT_FIELDS
    )


def _config_value(field: str, value: Any, watched_run: bool = False) -> str:
    """A config value as the form shows it: a word choice in the user's language (off, synthetic), a name as
    it is, an optional number's empty position in the form's word (Epochs "auto", Max steps "no limit"),
    yes/no/not set translated; a watched run's source (its dataset's column) in words ("an unchanged script")."""
    if watched_run and field in ("source", "dataset") and value in event_text.WATCHED_SOURCES:
        return core_text(event_text.WATCHED_SOURCES[value])
    if watched_run and field == "counted" and value in COUNTED:
        return QCoreApplication.translate("run_view", COUNTED[value])
    if value is None and field in NONE_TEXT:
        return none_text(field)
    return choice_text(field, value) if isinstance(value, str) else shown_value(value)


def fields_lines(values: Mapping[str, Any]) -> str:
    """One `name = value` line per field, sorted by name (a recorded config or summary, to read whole)."""
    watched_run = watched(values)
    return "\n".join(f"{name} = {_config_value(name, values[name], watched_run)}" for name in sorted(values))


def config_line(config: Mapping[str, Any]) -> str:
    """The log's line of a run's config, after its start."""
    return QCoreApplication.translate("EventDisplay", "config: {config}").format(config=config_text(config))


def plain_event_line(kind: str, data: Mapping[str, Any]) -> str:
    """Events `gpu_train_monitor.events.event_text` does not word (pauses and resumes), a checkpoint this version cannot
    rebuild as it words it; any other as its fields."""
    step = data.get("step")
    match kind:
        case "CheckpointSaved":
            return QCoreApplication.translate(
                "stored_run_text", "checkpoint saved at step {step} ({reason}): {path}"
            ).format(step=step, reason=data.get("reason"), path=data.get("path"))
        case "RunPaused":
            return QCoreApplication.translate("stored_run_text", "paused at step {step}").format(step=step)
        case "RunResumed":
            return QCoreApplication.translate("stored_run_text", "resumed at step {step}").format(step=step)
    return f"{kind}: {json.dumps(dict(data))}"  # an event this version does not know: its name and fields


class EventDisplay:
    """Shows a run's events on its loss and memory plots, its memory breakdown, its log and (given `step_time`)
    where its steps' time goes: a report's phases (its losses and memory are the caller's, which keeps them apart).

    A live event is shown as it arrives (`at` None): its log line carries the time now and its marks go on the
    live memory plot's clock (`time.monotonic`, as its readings). A recorded one is shown with `at`, the time
    it was recorded (seconds since the epoch): its log line carries that time and its marks go at seconds since
    `started_at`, the recorded memory plot's clock."""

    def __init__(
        self,
        loss_plot: LossPlot,
        memory_plot: MemoryPlot,
        breakdown_view: BreakdownView,
        log: LogPanel,
        step_time: StepTimeView | None = None,
    ) -> None:
        self.loss_plot, self.memory_plot, self.breakdown_view, self.log = loss_plot, memory_plot, breakdown_view, log
        self.step_time = step_time
        self.started_at = 0.0  # a recorded run's start (seconds since the epoch)

    def show_event(self, event: object, at: float | None = None) -> bool:
        """Log `event` and mark it on the plots; returns whether it is one shown here (False: the caller's to
        show or word). A cache clear's memory reading is the caller's to plot (a live one at once, a recorded
        one in order among the reports')."""
        match event:
            case RunStarted():
                self.memory_plot.add_sample(event.memory)
                self.log.add(core_text(event_text.run_started(event)), at=at)
                self.log.add(config_line(event.config), at=at)
            case EpochEnded():
                self.loss_plot.add_epoch_end(event.epoch, event.step, event.val_accuracy, event.complete)
                self.log.add(core_text(event_text.epoch_ended(event)), at=at)
            case RunPaused() | RunResumed():
                self.log.add(plain_event_line(type(event).__name__, {"step": integer(event.step)}), at=at)
            case CacheCleared():
                self.memory_plot.add_marker(event.memory.time_s, core_text(event_text.cache_cleared_mark(event)))
                self.log.add(core_text(event_text.cache_cleared(event)), at=at)
            case StepsReported() if self.step_time is not None:  # its phases; its losses are the caller's
                self.step_time.add_report(event)
            case MemoryBreakdown():
                self.breakdown_view.show_breakdown(event)
            case StepPredicted():  # a watched run's, beside its breakdowns
                self.breakdown_view.predicted.recorded(event)
            case SnapshotSaved():
                self.log.add(core_text(event_text.snapshot_saved(event)), at=at)
            case CheckpointSaved():
                self.log.add(core_text(event_text.checkpoint_saved(event)), at=at)
            case OutOfMemory():
                self.mark_status("oom", at)
                level = "error" if event.action == "stop" else "warning"
                self.log.add(core_text(event_text.out_of_memory(event)), level, at)
                for line in event_text.oom_autopsy(event):  # what held the memory, the batch that fits
                    self.log.add(core_text(line), at=at)
            case LogMessage():
                self.log.add(core_text(event.text), event.level, at)
            case _:
                return False
        return True

    def mark_status(self, status: str, at: float | None = None, error: bool = True) -> None:
        """A status on the memory plot where it happened (an out of memory, a run's failed end), in the status's
        words: the same mark for an out of memory the run survived and one that ended it."""
        self.memory_plot.add_marker(
            time.monotonic() if at is None else at - self.started_at, status_text(status), error=error
        )
