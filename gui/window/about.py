"""Help ▸ About and Help ▸ Copy system info: `gpu_train_monitor.device.system_info`'s facts plus the Qt runtime's
version, as a small rich-text box and as plain text for a bug report."""

from __future__ import annotations

import html

from PySide6 import QtCore
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication
from PySide6.QtWidgets import QMessageBox, QWidget

from gpu_train_monitor.device.system_info import APP_NAME, SystemInfo, app_summary, collect
from gpu_train_monitor.gui.qt.core_text import core_text

ISSUES_HINT = QT_TRANSLATE_NOOP(
    "about", "Copy system info (Help menu) puts these lines on the clipboard for a bug report."
)
# the package's description (pyproject.toml), shown translated when the installed one is this text
SUMMARY = QT_TRANSLATE_NOOP(
    "about", "Train a PyTorch model and watch the GPU live: loss, throughput and device memory."
)


def window_system_info(torch_ready: bool) -> SystemInfo:
    """Every fact, with the Qt the window runs on (which can differ from the one PySide6 was built with).
    `torch_ready`: torch has finished loading (before that, torch is not asked: see `collect`)."""
    return collect(torch_ready).with_facts([("Qt", QtCore.qVersion())])


def about_html(info: SystemInfo) -> str:
    """The About box's text: the app's name, version and summary, then each fact in a table. Names and
    values that are words are shown in the user's language (`gpu_train_monitor.device.system_info` makes them
    `Message`s); versions and names of software stay as they are."""
    rows = "".join(
        f"<tr><td style='padding-right: 12px'><b>{html.escape(core_text(name))}</b></td>"
        f"<td>{html.escape(core_text(value))}</td></tr>"
        for name, value in info.facts[1:]
    )
    summary = app_summary()
    if summary == SUMMARY:
        summary = QCoreApplication.translate("about", SUMMARY)
    title = QCoreApplication.translate("about", "GPU Training Monitor")
    hint = QCoreApplication.translate("about", ISSUES_HINT)
    return (
        f"<h3>{html.escape(title)} {html.escape(core_text(info.value(APP_NAME)))}</h3>"
        + (f"<p>{html.escape(summary)}</p>" if summary else "")
        + f"<table>{rows}</table><p>{html.escape(hint)}</p>"
    )


def open_about(parent: QWidget, info: SystemInfo) -> QMessageBox:
    """Show the About box without blocking (window-modal, closed with OK) and return it."""
    box = QMessageBox(parent)
    box.setWindowTitle(QCoreApplication.translate("about", "About GPU Training Monitor"))
    box.setTextFormat(QtCore.Qt.TextFormat.RichText)
    box.setText(about_html(info))
    icon = parent.windowIcon()
    if not icon.isNull():
        box.setIconPixmap(icon.pixmap(64, 64))
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box
