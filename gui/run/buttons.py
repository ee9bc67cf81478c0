"""Start, Compare, Pause/Resume, Stop and Clear cache: the actions with their shortcuts, the buttons that
trigger them, and when each one applies; under them, the estimate of the next run's time
(`gpu_train_monitor.gui.form.estimate`).

The shortcuts belong to the actions, which the Run menu (`gpu_train_monitor.gui.window.menu_bar`) shows too: a button
and a menu item with the same key would be an ambiguous shortcut that Qt ignores. The buttons' tooltips name the keys.
"""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QGridLayout, QLabel, QPushButton, QSizePolicy, QToolButton, QWidget

from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.views.window_state import WindowState


class RunButtons(QWidget):
    """The run's buttons in one row, each triggering its action; the window connects the actions'
    `triggered` and calls `update_for`, which enables the actions and their buttons together."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.start_action = self._action(self.tr("Start"), "F5")
        self.pause_action = self._action(self.tr("Pause"), "F6")
        self.stop_action = self._action(self.tr("Stop"), "Shift+F5")
        self.clear_action = self._action(self.tr("Clear cache"), "Ctrl+K")
        self.start_button = self._button(self.start_action)
        self.start_button.setObjectName("startButton")
        self.pause_button = self._button(self.pause_action)
        self.stop_button = self._button(self.stop_action)
        self.clear_button = self._button(self.clear_action)
        self._button_of = {
            self.start_action: self.start_button,
            self.pause_action: self.pause_button,
            self.stop_action: self.stop_button,
            self.clear_action: self.clear_button,
        }
        self.compare_button = QToolButton()  # its menu is filled by gpu_train_monitor.gui.compare.menu
        self.compare_button.setText(self.tr("Compare"))
        self.compare_button.setObjectName("compareButton")
        self.compare_button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.estimate_label = QLabel()
        self.estimate_label.setObjectName("estimateLabel")
        self.estimate_label.setWordWrap(True)
        self.estimate_label.setStyleSheet(f"color: {palette.NEUTRAL};")
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

    def _action(self, text: str, shortcut: str) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(shortcut))
        self.addAction(action)  # its shortcut works wherever the buttons are, with or without a menu bar
        return action

    @staticmethod
    def _button(action: QAction) -> QPushButton:
        button = QPushButton(action.text())
        button.clicked.connect(action.trigger)
        return button

    def update_for(
        self,
        state: WindowState,
        running: bool,
        torch_loaded: bool,
        form_problem: str | None,
        searching: bool,
        device_kind: str,
        compare_problem: str | None = None,
        clear_problem: str | None = None,
    ) -> None:
        """Enable what applies now; every disabled button's (and menu item's) tooltip says why.

        `form_problem`: the form's message when its values cannot run, else None; `compare_problem`: why the
        form's settings cannot be raced (a data-parallel run), else None; `clear_problem`: why Clear cache cannot
        act at rest (the device is another machine's), else None."""
        can_start = not running and torch_loaded and form_problem is None and not searching
        loading = self.tr("PyTorch is still loading")
        self._apply(
            self.start_action,
            can_start,
            loading
            if not torch_loaded
            else form_problem
            if form_problem is not None
            else self.tr("A batch-size search is running: it measures memory, so training waits")
            if searching
            else self.tr("Start training"),
        )
        can_compare = can_start and compare_problem is None
        self.compare_button.setEnabled(can_compare)
        self.compare_button.setToolTip(
            self.tr("Race 2 to 4 variations of these settings, one after another, each for the same steps")
            if can_compare
            else self.tr("A run is under way")
            if running
            else compare_problem
            if can_start
            else self.start_button.toolTip()
        )
        if self.compare_button.menu() is not None:  # the Run menu shows the same menu as a submenu
            self.compare_button.menu().menuAction().setEnabled(can_compare)
        self.pause_action.setText(self.tr("Resume") if state is WindowState.PAUSED else self.tr("Pause"))
        self.pause_button.setText(self.pause_action.text())
        self._apply(
            self.pause_action,
            running and state.can_pause,  # only once the run reports "running"
            self.tr("Pause or resume at the next step boundary"),
        )
        self._apply(self.stop_action, running and state.can_stop, self.tr("Stop at the next step boundary"))
        has_cache = device_kind in ("cuda", "mps") and torch_loaded
        self._apply(
            self.clear_action,
            has_cache and (running or clear_problem is None),
            clear_problem
            if has_cache and not running and clear_problem is not None
            else self.tr("Return cached, unused blocks to the driver and show what that freed")
            if has_cache
            else self.tr("The CPU has no caching allocator: there is no cache to clear")
            if torch_loaded
            else loading,
        )

    def _apply(self, action: QAction, enabled: bool, tip: str) -> None:
        """Enable `action` and its button; both tooltips get `tip`, with the key when it can be pressed."""
        keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        shown = self.tr("{tip} ({keys})").format(tip=tip, keys=keys) if enabled and keys else tip
        for target in (action, self._button_of[action]):
            target.setEnabled(enabled)
            target.setToolTip(shown)

    def show_estimate(self, text: str) -> None:
        """'Estimated time: about 1 min 20 s (...)', or nothing (hidden) when `text` is empty."""
        self.estimate_label.setText(self.tr("Estimated time: {estimate}").format(estimate=text) if text else "")
        self.estimate_label.setVisible(bool(text))
