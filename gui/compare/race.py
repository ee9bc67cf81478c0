"""One run of a comparison as the compare view races it (`Race`), its images/s as the bars show it, and its line
of text under the plots, in the user's language (Qt's translator, context "compare_race"): its status (a run's
through `gpu_train_monitor.gui.i18n.status_text`, or the view's own: waiting, not run, ended without a result), then
what it measured, each fact a clause of its own, numbers in the locale's digits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PySide6.QtCore import QCoreApplication

from gpu_train_monitor.compare.result import ratio_text
from gpu_train_monitor.gui.i18n.status_text import status_text
from gpu_train_monitor.gui.plots.ring_buffer import RingBuffer
from gpu_train_monitor.gui.qt.core_text import choice_text, core_text
from gpu_train_monitor.gui.qt.locale_format import number


@dataclass
class Race:
    """One run of the comparison as the view knows it."""

    index: int
    label: str
    colour: tuple[int, int, int]
    data: RingBuffer  # step, seconds since the run's start, loss
    # a run's status (`gpu_train_monitor.gui.i18n.status_text`), or one of the view's own: `race_status_text`
    status: str = "waiting"
    message: str = ""  # core's (a `gpu_train_monitor.base.text.Message` or plain text), or the view's own, translated
    step: int = 0
    total: int = 0
    elapsed: float = 0.0  # of the last report
    rates: list[float] = field(default_factory=list)  # images/s per report after the first
    reports: int = 0
    result: Any = None  # gpu_train_monitor.compare.result.ContenderResult, once concluded


def contender_labels(contenders: Sequence[Any]) -> list[str]:
    """Each contender's label (`gpu_train_monitor.compare.plan.Contender`) in the user's language: the words of
    core's label ('resident', 'no compile', 'amp bf16', 'base') said here, its names and values as they are. A
    label core makes otherwise than this knows is shown as core made it."""
    from gpu_train_monitor.compare.plan import label

    fields = {name for c in contenders for name in c.overrides}
    distinct = {
        name for name in fields if len({repr(c.overrides.get(name, _UNSET)) for c in contenders}) > 1
    }  # what tells the runs apart, as core's plan labels them
    labels = []
    for c in contenders:
        shown = {name: value for name, value in c.overrides.items() if name in distinct} or dict(c.overrides)
        labels.append(_label_text(shown) if label(shown) == c.label else c.label)
    return labels


_UNSET = object()


def _label_text(overrides: Mapping[str, Any]) -> str:
    translate = QCoreApplication.translate
    parts = []
    for name, value in overrides.items():
        if isinstance(value, bool):
            parts.append(name if value else translate("compare_race", "no {setting}").format(setting=name))
        elif name == "placement":
            parts.append(choice_text(name, str(value)))
        elif name in ("device", "model"):
            parts.append(str(value))
        elif name == "amp":
            parts.append(translate("compare_race", "amp {precision}").format(precision=choice_text(name, str(value))))
        elif name == "attention":
            parts.append(
                translate("compare_race", "{attention} attention").format(attention=choice_text(name, str(value)))
            )
        else:
            parts.append(f"{name}={value}")
    return translate("compare_race", ", ").join(parts) or translate("compare_race", "base")


def spread(rates: Sequence[float]) -> tuple[float, float, float] | None:
    """(median, 10th, 90th percentile) of per-report images/s, as `gpu_train_monitor.engine.loop_state` figures the
    summary."""
    if not rates:
        return None
    values = np.asarray(rates, dtype=float)
    low, mid, high = np.percentile(values, [10, 50, 90]) if len(values) >= 2 else (values[0],) * 3
    return float(mid), float(low), float(high)


def race_rate(race: Race) -> tuple[float, float, float] | None:
    """(images/s, p10, p90) as the bars show it: the result's once concluded, else the live reports'."""
    run = race.result
    if run is not None:
        if run.samples_per_s is None:
            return None
        low, high = run.samples_per_s_spread or (run.samples_per_s, run.samples_per_s)
        return run.samples_per_s, low, high
    return spread(race.rates)


def race_status_text(status: str) -> str:
    """A race's status for people: the view's own (a run that waits, was never run, or lost its result), else
    the run's status word."""
    if status == "waiting":
        return QCoreApplication.translate("compare_race", "waiting")
    if status == "not run":
        return QCoreApplication.translate("compare_race", "not run")
    if status == "ended without a result":
        return QCoreApplication.translate("compare_race", "ended without a result")
    return status_text(status)


def not_run_reason(comparison_status: str) -> str:
    """Why a run never had its turn: how the comparison ended before it."""
    if comparison_status == "stopped":
        return QCoreApplication.translate("compare_race", "the comparison stopped before its turn")
    if comparison_status == "failed":
        return QCoreApplication.translate("compare_race", "the comparison failed before its turn")
    if comparison_status == "completed":
        return QCoreApplication.translate("compare_race", "the comparison completed before its turn")
    return QCoreApplication.translate("compare_race", "the comparison ended before its turn")


def race_line(race: Race, slowest: float | None, several: bool) -> str:
    """'2. resident: running, step 6 / 6, 220 images/s (p10 to p90: 204 to 236)': the race's status, then what it
    measured; against the `slowest` rate when there are `several` races."""
    translate = QCoreApplication.translate
    facts: list[str] = []
    if race.status == "running":
        facts.append(translate("compare_race", "step {step} / {total}").format(step=race.step, total=race.total))
    if race.status in ("running", "completed"):
        facts += _figures(race, slowest if several else None)
    run = race.result
    if race.status == "completed" and run is not None:
        if run.loss_last is not None:
            facts.append(translate("compare_race", "last loss {loss}").format(loss=number(run.loss_last, 4)))
        if run.compile_s is not None:
            facts.append(
                translate("compare_race", "compiled in {seconds} s (not in images/s)").format(
                    seconds=number(run.compile_s, 1)
                )
            )
    values = dict(number=race.index + 1, label=race.label, status=race_status_text(race.status))
    if race.status == "waiting":
        return translate("compare_race", "{number}. {label}: waits its turn").format(**values)
    if facts:
        return translate("compare_race", "{number}. {label}: {status}, {facts}").format(
            facts=translate("compare_race", ", ").join(facts), **values
        )
    message = core_text(race.message)
    if message:
        return translate("compare_race", "{number}. {label}: {status}: {message}").format(message=message, **values)
    return translate("compare_race", "{number}. {label}: {status}").format(**values)


def _figures(race: Race, slowest: float | None) -> list[str]:
    """The race's images/s with its spread and how it compares to the `slowest` (if given); a completed run
    without one: that it measured no steady speed."""
    translate = QCoreApplication.translate
    rate = race_rate(race)
    if rate is None:
        return [translate("compare_race", "no steady speed measured")] if race.status == "completed" else []
    figures = [
        translate("compare_race", "{rate} images/s (p10 to p90: {low} to {high})").format(
            rate=number(rate[0], 0), low=number(rate[1], 0), high=number(rate[2], 0)
        )
    ]
    if slowest:
        figures.append(translate("compare_race", "{ratio} the slowest").format(ratio=ratio_text(rate[0] / slowest)))
    return figures
