"""A run's status (`gpu_train_monitor.events.status.Status`, as core and the run store spell it) as the window shows it:
the one table of its words in the user's language and its colour."""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from gpu_train_monitor.events.status import Status
from gpu_train_monitor.gui.qt import palette


class StatusLook(NamedTuple):
    words: str  # English; translated in the context "status_text" where shown
    colour: str


STATUS_LOOKS = {
    Status.RUNNING: StatusLook(QT_TRANSLATE_NOOP("status_text", "running"), palette.NEUTRAL),  # live: LIVE_COLOUR
    Status.COMPLETED: StatusLook(QT_TRANSLATE_NOOP("status_text", "completed"), palette.DONE),
    Status.STOPPED: StatusLook(QT_TRANSLATE_NOOP("status_text", "stopped"), palette.NEUTRAL),
    Status.DIVERGED: StatusLook(QT_TRANSLATE_NOOP("status_text", "diverged"), palette.ERROR),
    Status.OOM: StatusLook(QT_TRANSLATE_NOOP("status_text", "out of memory"), palette.ERROR),
    Status.FAILED: StatusLook(QT_TRANSLATE_NOOP("status_text", "failed"), palette.ERROR),
    Status.INTERRUPTED: StatusLook(QT_TRANSLATE_NOOP("status_text", "interrupted"), palette.WARNING),
}
LIVE_COLOUR = palette.GOOD  # a run training now (a `running` row whose recorder is gone is not live)


def status_text(status: str) -> str:
    """`status` for people; an unknown word (a newer version's) is shown as it is."""
    look = STATUS_LOOKS.get(status)
    return QCoreApplication.translate("status_text", look.words) if look else status


def status_colour(status: str, live: bool = False) -> str:
    """The colour `status` is shown in; a live run's is LIVE_COLOUR, an unknown word's neutral."""
    if live:
        return LIVE_COLOUR
    look = STATUS_LOOKS.get(status)
    return look.colour if look else palette.NEUTRAL
