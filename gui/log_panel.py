"""The run log: run start (with its config), epoch results, cache clears, warnings and errors."""

from __future__ import annotations

import time

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

MAX_LINES = 5000


class LogPanel(QPlainTextEdit):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("logPanel")
        self.setReadOnly(True)
        self.setMaximumBlockCount(MAX_LINES)
        self.setPlaceholderText("Run start, epoch results, cache clears, warnings and errors appear here.")

    def add(self, text: str, level: str = "info") -> None:
        prefix = {"warning": "warning: ", "error": "ERROR: "}.get(level, "")
        self.appendPlainText(f"{time.strftime('%H:%M:%S')}  {prefix}{text}")
        self.moveCursor(QTextCursor.MoveOperation.End)

    def lines(self) -> list[str]:
        return self.toPlainText().splitlines()
