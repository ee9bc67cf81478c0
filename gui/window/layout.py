"""Where the main window's parts go. Left: the settings form (scrolling), the run buttons, the snapshot
controls and the run's live numbers. Right: the out-of-memory banner over a vertical splitter of the plot
tabs (the training loss, or a comparison's race), the memory plot and the tabs below them (log, runs,
memory breakdown, NVML, batch-size finder). The parts are built and wired by the window; this only places
them, so the window's code reads as what it does rather than how it is laid out.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QGroupBox, QScrollArea, QSplitter, QStyle, QTabWidget, QVBoxLayout, QWidget

FORM_MIN_WIDTH = 340


def settings_column(form: QWidget, buttons: QWidget, snapshot_controls: QWidget, stats: QWidget) -> QWidget:
    """The left column: the form scrolls (its height grows with the options); the rest stays in view."""
    form_scroll = QScrollArea()
    form_scroll.setWidgetResizable(True)
    form_scroll.setWidget(form)
    form_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    fit_form_width(form_scroll)
    stats_box = QGroupBox(QCoreApplication.translate("window_layout", "Run"))
    QVBoxLayout(stats_box).addWidget(stats)
    column = QWidget()
    layout = QVBoxLayout(column)
    layout.setContentsMargins(4, 4, 4, 4)
    layout.addWidget(form_scroll, 1)
    layout.addWidget(buttons)
    layout.addWidget(snapshot_controls)
    layout.addWidget(stats_box)
    return column


def fit_form_width(form_scroll: QScrollArea) -> None:
    """The scroll area is as wide as the form needs beside its vertical scroll bar: never narrower, or the
    form runs under the scroll bar and Tab scrolls it sideways (labels cut)."""
    form = form_scroll.widget()
    scroll_bar = form_scroll.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, form_scroll)
    frame = 2 * form_scroll.frameWidth()
    form_scroll.setMinimumWidth(max(FORM_MIN_WIDTH, form.minimumSizeHint().width() + scroll_bar + frame))


def add_tabs(tabs: QTabWidget, pages: Sequence[tuple[QWidget, str]]) -> None:
    """Each (page, title) as a tab, in order."""
    for page, title in pages:
        tabs.addTab(page, title)


def plot_splitter(plot_tabs: QTabWidget, memory_plot: QWidget, tabs: QTabWidget) -> QSplitter:
    """The right side's splitter: the plot tabs over the memory plot over the tabs."""
    splitter = QSplitter(Qt.Orientation.Vertical)
    splitter.addWidget(plot_tabs)
    splitter.addWidget(memory_plot)
    splitter.addWidget(tabs)
    splitter.setSizes([360, 240, 280])  # the tabs below show about ten runs of the Runs tab
    return splitter


def main_splitter(left: QWidget, banner: QWidget, right_splitter: QSplitter) -> QSplitter:
    """The window's centre: the settings column beside the banner and the right side's splitter."""
    right = QWidget()
    right_layout = QVBoxLayout(right)
    right_layout.setContentsMargins(0, 0, 0, 0)
    right_layout.addWidget(banner)
    right_layout.addWidget(right_splitter, 1)
    splitter = QSplitter(Qt.Orientation.Horizontal)
    splitter.addWidget(left)
    splitter.addWidget(right)
    splitter.setStretchFactor(1, 1)
    splitter.setSizes([360, 900])
    return splitter
