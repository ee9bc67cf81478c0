"""The plots over the memory plot: the training loss, or a comparison's race, whichever tab is in front; and
the plots the window shows now, for File ▸ Save plots.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QTabWidget, QWidget

from gpu_train_monitor.gui.compare.view import CompareView
from gpu_train_monitor.gui.plots.live_plot import is_shown
from gpu_train_monitor.gui.plots.loss_plot import LossPlot
from gpu_train_monitor.gui.plots.memory_plot import MemoryPlot


class PlotTabs(QTabWidget):
    """The loss plot's tab and the comparison's; a comparison's race replaces the loss plot while it is on."""

    def __init__(self, loss_plot: LossPlot, compare_view: CompareView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.loss_plot, self.compare_view = loss_plot, compare_view
        # the window's texts: retranslate says them again in the same context
        self.addTab(loss_plot, QCoreApplication.translate("MainWindow", "Training loss"))
        self.addTab(compare_view, QCoreApplication.translate("MainWindow", "Comparison"))

    def shown_plots(self, memory_plot: MemoryPlot) -> list[tuple[str, pg.PlotWidget]]:
        """(file-name part, plot) for each plot shown now, drawn up to date: the loss plot (with validation
        accuracy once it has points) or the comparison's three plots, whichever tab is in front, and
        `memory_plot`; none that a collapsed splitter hides."""
        if self.currentWidget() is self.compare_view:
            view = self.compare_view
            view.draw_now()
            plots = [
                ("comparison-time", view.time_plot),
                ("comparison-step", view.step_plot),
                ("comparison-speed", view.rate_plot),
            ]
        else:
            self.loss_plot.refresh()
            plots = [("loss", self.loss_plot.plot)]
            validation_x, _ = self.loss_plot.val_curve.getData()
            if validation_x is not None and len(validation_x):
                plots.append(("validation", self.loss_plot.val_plot))
        memory_plot.refresh()
        plots.append(("memory", memory_plot.plot))
        return [(name, plot) for name, plot in plots if is_shown(plot)]
