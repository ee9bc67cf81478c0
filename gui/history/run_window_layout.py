"""Where a recorded run's window (`gpu_train_monitor.gui.history.run_window`) puts what it shows: the header with the
run's controls on top and a problem line under them, the run's numbers at the left, and at the right its loss and
memory plots over the tabs of its events, memory breakdown, images/s and config. The texts keep the window's
translation context (its class name)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QSplitter, QTabWidget, QVBoxLayout, QWidget

from gpu_train_monitor.gui.qt import palette

if TYPE_CHECKING:  # the window imports this module
    from gpu_train_monitor.gui.history.run_window import StoredRunView


def header_label() -> QLabel:
    """The header: what the run is, its state and where it is controlled (rich text, selectable)."""
    header = QLabel()
    header.setObjectName("storedRunHeader")
    header.setWordWrap(True)
    header.setTextFormat(Qt.TextFormat.RichText)
    header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return header


def problem_label() -> QLabel:
    """The problem line under the header (a store that cannot be read), hidden until there is one."""
    problem = QLabel()
    problem.setObjectName("storedRunProblem")
    problem.setWordWrap(True)
    problem.setStyleSheet(f"color: {palette.ERROR};")
    problem.hide()
    return problem


def lay_out(view: StoredRunView) -> QTabWidget:
    """Place the widgets `view` made in it (sized for its 1100 x 780 pixels); returns the tabs."""
    stats_box = QGroupBox(QCoreApplication.translate("StoredRunView", "Run"))
    QVBoxLayout(stats_box).addWidget(view.stats)
    left = QWidget()
    left_layout = QVBoxLayout(left)
    left_layout.setContentsMargins(0, 0, 0, 0)
    left_layout.addWidget(stats_box)
    left_layout.addStretch(1)
    tabs = QTabWidget()
    tabs.addTab(view.log, QCoreApplication.translate("StoredRunView", "Events"))
    tabs.addTab(view.breakdown_view, view.breakdown_view.tab_title())  # the main window's words for it
    tabs.addTab(view.step_time, QCoreApplication.translate("MainWindow", "Step time"))  # as the main window
    tabs.addTab(view.rate_plot, QCoreApplication.translate("StoredRunView", "Speed"))
    tabs.addTab(view.config_text, QCoreApplication.translate("StoredRunView", "Config"))
    plots = QSplitter(Qt.Orientation.Vertical)
    plots.addWidget(view.loss_plot)
    plots.addWidget(view.memory_plot)
    plots.addWidget(tabs)
    plots.setSizes([330, 250, 170])
    body = QSplitter(Qt.Orientation.Horizontal)
    body.addWidget(left)
    body.addWidget(plots)
    body.setStretchFactor(1, 1)
    body.setSizes([240, 860])
    layout = QVBoxLayout(view)
    layout.setContentsMargins(6, 6, 6, 6)
    top = QHBoxLayout()
    top.addWidget(view.header, 1)
    top.addWidget(view.control_row, 0, Qt.AlignmentFlag.AlignTop)
    layout.addLayout(top)
    layout.addWidget(view.problem)
    layout.addWidget(body, 1)
    return tabs
