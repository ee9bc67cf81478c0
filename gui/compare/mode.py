"""A comparison as the window runs it: its events unwrapped for the usual live views, its race shown.

`gpu_train_monitor.compare.comparison.Comparison` emits ComparisonStarted, then every session event wrapped as
ContenderEvent(index, event), then ComparisonFinished(result). Here each wrapped event goes to the
compare view, and comes back unwrapped with the config its run started from, so the window's memory
plot, numbers and log follow the run under way exactly as they follow a single run (reset at each
run's RunStarted). The log gets the comparison's own lines: what races, each run's turn, the headline.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject

from gpu_train_monitor.compare.events import ComparisonFinished, ComparisonStarted
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.events.events import ContenderEvent, RunStarted
from gpu_train_monitor.gui.compare.race import contender_labels
from gpu_train_monitor.gui.compare.view import CompareView
from gpu_train_monitor.gui.i18n.status_text import status_text
from gpu_train_monitor.gui.qt.core_text import core_text
from gpu_train_monitor.gui.views.log_panel import LogPanel
from gpu_train_monitor.gui.views.run_view import RunView

COMPARISON_EVENTS = (ComparisonStarted, ContenderEvent, ComparisonFinished)


class CompareMode(QObject):
    """Owns the compare view and the comparison under way (`gpu_train_monitor.compare.comparison.Comparison`), if
    any."""

    def __init__(self, run_view: RunView, log: LogPanel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.run_view, self.log = run_view, log
        self.view = CompareView()
        self.comparison: Any = None
        self.result: Any = None  # the last ComparisonResult

    @property
    def active(self) -> bool:
        """A comparison was started and has not concluded."""
        return self.comparison is not None

    def begin(self, comparison: Any, name: str) -> None:
        self.comparison, self.result = comparison, None
        contenders = comparison.contenders
        self.view.begin(contenders, comparison.steps, name)
        labels = contender_labels(contenders)  # as the race names them
        runs = self.tr("; ", "between the runs of a comparison").join(
            self.tr("{number}. {label}").format(number=c.index + 1, label=labels[i]) for i, c in enumerate(contenders)
        )
        self.log.add(
            self.tr("comparing {count} configurations ({name}), {steps} steps each, one after another: {runs}").format(
                count=len(contenders), name=core_text(name), steps=comparison.steps, runs=runs
            )
        )

    def ended_text(self, status: str, headline: str) -> str:
        """The log's line for a concluded comparison: how it ended (completed, stopped or failed), its headline."""
        if status == "completed":
            return self.tr("comparison completed: {headline}").format(headline=headline)
        if status == "stopped":
            return self.tr("comparison stopped: {headline}").format(headline=headline)
        if status == "failed":
            return self.tr("comparison failed: {headline}").format(headline=headline)
        return self.tr("comparison ended ({status}): {headline}").format(status=status_text(status), headline=headline)

    def end(self) -> None:
        """The comparison's thread is gone (concluded, stopped or crashed)."""
        if self.comparison is not None and self.result is None:
            self.view.abandon()
        self.comparison = None

    def take(self, event: object) -> tuple[object, RunConfig] | None:
        """Show a comparison event; return a run's own event with the config it started from, for the
        window's usual views, or None for the comparison's own events."""
        if self.comparison is None:
            return None
        contenders = self.comparison.contenders
        match event:
            case ContenderEvent(index=index, event=inner) if 0 <= index < len(contenders):
                contender = contenders[index]
                if isinstance(inner, RunStarted):
                    self.log.add(
                        self.tr("run {number} of {count}: {label}").format(
                            number=index + 1, count=len(contenders), label=contender_labels(contenders)[index]
                        )
                    )
                    self.run_view.reset(contender.config)  # the live views follow this run from its start
                self.view.add(index, inner)
                return inner, contender.config
            case ComparisonFinished(result=result):
                self.result = result
                self.view.finish(result)
                failed = result.speedup is None
                self.log.add(
                    self.ended_text(result.status, core_text(result.headline)), "warning" if failed else "info"
                )
                if result.agreement:
                    self.log.add(core_text(result.agreement), "info" if result.losses_agree else "warning")
        return None
