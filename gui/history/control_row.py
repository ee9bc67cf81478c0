"""Stop, Pause / Resume and Clear cache in a run's own window, for a run this window launched (a data-parallel
run's processes): the buttons call the launcher, which signals the run's rank 0. Any other live run is
read-only in its window: it is controlled where it runs."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.gui.qt.core_text import error_text


class RunControlRow(QWidget):
    """Hidden until `controls` (with `request_stop()`, `toggle_pause()`, `request_cache_clear()`) is set and
    the run is live; `failed` says why a control could not reach the run."""

    failed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controls: Any = None
        self.buttons = {
            "stop": QPushButton(self.tr("Stop")),
            "pause": QPushButton(self.tr("Pause")),
            "clear": QPushButton(self.tr("Clear cache")),
        }
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for name, button in self.buttons.items():
            button.clicked.connect(lambda _checked=False, name=name: self._act(name))
            layout.addWidget(button)
        self.hide()

    def show_for(self, live: bool, paused: bool, clears_cache: bool = True) -> None:
        """Shown while the run is live and controlled from here; Pause reads Resume while it is paused; Clear cache
        only where the run's device has a cache to clear (not the CPU)."""
        self.setVisible(self.controls is not None and live)
        self.buttons["pause"].setText(self.tr("Resume") if paused else self.tr("Pause"))
        self.buttons["clear"].setVisible(clears_cache)

    def _act(self, name: str) -> None:
        if self.controls is None:
            return
        try:
            {
                "stop": self.controls.request_stop,
                "pause": self.controls.toggle_pause,
                "clear": self.controls.request_cache_clear,
            }[name]()
        except UserError as exc:  # rank 0 is gone, or the store cannot be read: said, not raised
            self.failed.emit(error_text(exc))
