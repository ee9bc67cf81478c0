"""Start, Compare, Pause/Resume, Stop and Clear cache: the buttons, their shortcuts, and when each one
applies; under them, the estimate of the next run's time (`gui.run_estimate`)."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QGridLayout, QLabel, QPushButton, QToolButton, QSizePolicy, QWidget

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
        self.compare_button = QToolButton()  # its menu is filled by gui.compare_menu
        self.compare_button.setText("Compare")
        self.compare_button.setObjectName("compareButton")
        self.compare_button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.estimate_label = QLabel()
        self.estimate_label.setObjectName("estimateLabel")
        self.estimate_label.setWordWrap(True)
        self.estimate_label.setStyleSheet("color: #444444;")
        self.estimate_label.hide()
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        # starting things on the first row, steering the run under way on the second
        grid.addWidget(self.start_button, 0, 0, 1, 3)
        grid.addWidget(self.compare_button, 0, 3, 1, 3)
        grid.addWidget(self.pause_button, 1, 0, 1, 2)
        grid.addWidget(self.stop_button, 1, 2, 1, 2)
        grid.addWidget(self.clear_button, 1, 4, 1, 2)
        grid.addWidget(self.estimate_label, 2, 0, 1, 6)

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
        self.compare_button.setEnabled(self.start_button.isEnabled())
        self.compare_button.setToolTip(
            "Race 2 to 4 variations of these settings, one after another, each for the same steps"
            if self.start_button.isEnabled() else "A run is under way" if running
            else self.start_button.toolTip())
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

    def show_estimate(self, text: str) -> None:
        """'Estimated time: about 1 min 20 s (...)', or nothing (hidden) when `text` is empty."""
        self.estimate_label.setText(f"Estimated time: {text}" if text else "")
        self.estimate_label.setVisible(bool(text))
