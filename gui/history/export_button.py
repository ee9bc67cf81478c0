"""The Runs tab's Export button (`gpu_train_monitor.gui.history.panel`): it opens the export menu (JSON, CSV, a
TensorBoard log dir) and follows the export action: disabled without one run selected, or while an export runs,
with the action's tooltip saying why. Its text keeps the panel's translation context ("HistoryPanel").
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QToolButton


class ExportButton(QToolButton):
    """Opens `menu`; enabled, and tooltipped, as `action` is."""

    def __init__(self, action: QAction, menu: QMenu) -> None:
        super().__init__()
        self.action = action
        self.setText(QCoreApplication.translate("HistoryPanel", "Export"))
        self.setToolTip(action.statusTip())
        self.setMenu(menu)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        action.changed.connect(self.follow)

    @Slot()
    def follow(self) -> None:
        """Enabled and tooltipped as the export action is now."""
        self.setEnabled(self.action.isEnabled())
        self.setToolTip(self.action.toolTip())
