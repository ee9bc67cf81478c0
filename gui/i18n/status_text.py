"""A run's status word (as core and the run store spell it) in the user's language."""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

_STATUSES = {
    "running": QT_TRANSLATE_NOOP("status_text", "running"),
    "completed": QT_TRANSLATE_NOOP("status_text", "completed"),
    "stopped": QT_TRANSLATE_NOOP("status_text", "stopped"),
    "diverged": QT_TRANSLATE_NOOP("status_text", "diverged"),
    "oom": QT_TRANSLATE_NOOP("status_text", "out of memory"),
    "failed": QT_TRANSLATE_NOOP("status_text", "failed"),
    "interrupted": QT_TRANSLATE_NOOP("status_text", "interrupted"),
}


def status_text(status: str) -> str:
    """`status` for people; an unknown word (a newer version's) is shown as it is."""
    english = _STATUSES.get(status)
    return QCoreApplication.translate("status_text", english) if english else status
