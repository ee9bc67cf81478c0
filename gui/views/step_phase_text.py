"""A training step's phases as the window says and colours them (the Step time tab, the comparison's split), so a
phase has one name and one colour everywhere, and the split and the verdict read the same in both places.

The phases are core's (`gpu_train_monitor.events.events.STEP_PHASES`); the verdict is core's
(`gpu_train_monitor.engine.step_phases.verdict`), its advice a core `Message` translated here. Translation
context "step_phases".
"""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from gpu_train_monitor.engine.step_phases import verdict
from gpu_train_monitor.events.events import STEP_PHASES, StepPhases
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.core_text import core_text
from gpu_train_monitor.gui.qt.locale_format import number

# each phase's name for people and its colour: waiting for data in warm colours, the model's work in cool ones,
# the loop's own bookkeeping grey (it should be thin)
PHASE_NAMES = {
    "data": QT_TRANSLATE_NOOP("step_phases", "data"),
    "copy": QT_TRANSLATE_NOOP("step_phases", "copy"),
    "forward": QT_TRANSLATE_NOOP("step_phases", "forward"),
    "backward": QT_TRANSLATE_NOOP("step_phases", "backward"),
    "optimizer": QT_TRANSLATE_NOOP("step_phases", "optimizer"),
    "recording": QT_TRANSLATE_NOOP("step_phases", "recording"),
}
PHASE_COLOURS: dict[str, tuple[int, int, int]] = {
    "data": palette.TAB_ORANGE,
    "copy": palette.TAB_BROWN,
    "forward": palette.TAB_BLUE,
    "backward": palette.TAB_GREEN,
    "optimizer": palette.TAB_PURPLE,
    "recording": (150, 150, 150),
}
assert tuple(PHASE_NAMES) == STEP_PHASES == tuple(PHASE_COLOURS)  # a new phase needs a name and a colour
VERDICT_NAMES = {
    "input-bound": QT_TRANSLATE_NOOP("step_phases", "input-bound"),
    "host-bound": QT_TRANSLATE_NOOP("step_phases", "host-bound"),
    "compute-bound": QT_TRANSLATE_NOOP("step_phases", "compute-bound"),
}


def phase_name(phase: str) -> str:
    return QCoreApplication.translate("step_phases", PHASE_NAMES[phase]) if phase in PHASE_NAMES else phase


def colour_hex(phase: str) -> str:
    return "#%02x%02x%02x" % PHASE_COLOURS[phase]


def shares(phases: StepPhases) -> list[float]:
    """Each phase's part of the step (0..1), of the phases' sum: what the bars stack to."""
    total = sum(phases.seconds)
    return [s / total if total > 0 else 0.0 for s in phases.seconds]


def phase_cell(seconds: float, share: float) -> str:
    """One phase as a number and a share: "12.3 ms · 45%"."""
    return QCoreApplication.translate("step_phases", "{ms} ms · {percent}%").format(
        ms=number(1000 * seconds, 1), percent=number(100 * share, 0)
    )


def verdict_name(phases: StepPhases) -> str:
    """What bounds the steps, in a word or two ("input-bound")."""
    kind = verdict(phases).kind
    return QCoreApplication.translate("step_phases", VERDICT_NAMES[kind]) if kind in VERDICT_NAMES else kind


def verdict_line(phases: StepPhases) -> str:
    """The verdict and what to try, in one line: "Input-bound: the training waits for its data 62% of…"."""
    found = verdict(phases)
    return QCoreApplication.translate("step_phases", "{verdict}: {advice}").format(
        verdict=verdict_name(phases), advice=core_text(found.advice)
    )


def stored_phases(summary: dict[str, object]) -> StepPhases | None:
    """A recorded run's step phases, from its stored summary's `step_phases_s` (None: its steps were not timed)."""
    values = summary.get("step_phases_s")
    if not isinstance(values, dict) or not all(isinstance(values.get(name), (int, float)) for name in STEP_PHASES):
        return None
    seconds = tuple(float(values[name]) for name in STEP_PHASES)  # type: ignore[arg-type]
    step = values.get("step")
    caught_up = summary.get("gpu_caught_up")  # on CUDA: decides a host-bound verdict
    return StepPhases(
        seconds,
        float(step) if isinstance(step, (int, float)) else sum(seconds),
        caught_up=float(caught_up) if isinstance(caught_up, (int, float)) else None,
    )


def split_line(phases: StepPhases) -> str:
    """Each phase's time and share, in the user's words: "data 1.1 ms · 0%, forward 122.8 ms · 49%, ..."."""
    cell = QCoreApplication.translate("step_phases", "{phase} {cell}")
    parts = zip(STEP_PHASES, phases.seconds, shares(phases), strict=True)
    cells = [cell.format(phase=phase_name(name), cell=phase_cell(seconds, share)) for name, seconds, share in parts]
    return QCoreApplication.translate("step_phases", ", ", "between the phases of a step").join(cells)
