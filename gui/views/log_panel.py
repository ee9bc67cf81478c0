"""The run log: run start (with its config), epoch results, cache clears, warnings and errors."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from gpu_train_monitor.gui.qt.core_text import core_text
from gpu_train_monitor.gui.qt.locale_format import clock

MAX_LINES = 5000


class LogPanel(QPlainTextEdit):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("logPanel")
        self.setReadOnly(True)
        self.setMaximumBlockCount(MAX_LINES)
        self.setPlaceholderText(self.tr("Run start, epoch results, cache clears, warnings and errors appear here."))

    def add(self, text: str, level: str = "info", at: float | None = None) -> None:
        """A line with the time now, or `at` (seconds since the epoch: a recorded run's line, stamped with when it
        was recorded); `text` is shown in the user's language when it is a core `Message`."""
        text = core_text(text)
        if level == "warning":
            text = self.tr("warning: {text}").format(text=text)
        elif level == "error":
            text = self.tr("ERROR: {text}").format(text=text)
        self.appendPlainText(f"{clock(at)}  {text}")
        self.moveCursor(QTextCursor.MoveOperation.End)

    def lines(self) -> list[str]:
        return self.toPlainText().splitlines()
