"""Start, Pause/Resume, Stop and Clear cache: the buttons, their shortcuts, and when each one applies."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from gui.run_state import RunState


class RunButtons(QWidget):
    """The run's buttons in one row; the window connects their `clicked` and calls `update_for`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.start_button = self._button("Start", "F5")
        self.start_button.setObjectName("startButton")
        self.pause_button = self._button("Pause", "F6")
        self.stop_button = self._button("Stop", "Shift+F5")
        self.clear_button = self._button("Clear cache", "Ctrl+K")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for button in (self.start_button, self.pause_button, self.stop_button, self.clear_button):
            row.addWidget(button)

    @staticmethod
    def _button(text: str, shortcut: str) -> QPushButton:
        button = QPushButton(text)
        button.setShortcut(QKeySequence(shortcut))
        return button

    def update_for(self, state: RunState, running: bool, torch_loaded: bool, form_problem: str | None,
                   searching: bool, device_kind: str) -> None:
        """Enable what applies now; every disabled button's tooltip says why.

        `form_problem`: the form's message when its values cannot run, else None."""
        self.start_button.setEnabled(not running and torch_loaded and form_problem is None and not searching)
        if not torch_loaded:
            self.start_button.setToolTip("PyTorch is still loading")
        elif form_problem is not None:
            self.start_button.setToolTip(form_problem)
        elif searching:
            self.start_button.setToolTip("A batch-size search is running: it measures memory, so training waits")
        else:
            self.start_button.setToolTip("Start training (F5)")
        self.pause_button.setText("Resume" if state is RunState.PAUSED else "Pause")
        self.pause_button.setEnabled(running and state.can_pause)  # only once the run reports "running"
        self.pause_button.setToolTip("Pause or resume at the next step boundary (F6)")
        self.stop_button.setEnabled(running and state.can_stop)
        self.stop_button.setToolTip("Stop at the next step boundary (Shift+F5)")
        has_cache = device_kind in ("cuda", "mps") and torch_loaded
        self.clear_button.setEnabled(has_cache)
        self.clear_button.setToolTip(
            "Return cached, unused blocks to the driver and show what that freed (Ctrl+K)" if has_cache else
            "The CPU has no caching allocator: there is no cache to clear" if torch_loaded else
            "PyTorch is still loading")
