"""A horizontal bar split into parts proportional to their bytes (the memory breakdown's parts), with each part's
size and share in its tooltip."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.gui.qt.locale_format import number


class StackedBar(QWidget):
    """A horizontal bar split into the breakdown's parts, proportional to their bytes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.values: list[tuple[str, int, tuple[int, int, int]]] = []
        self.setMinimumHeight(28)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_values(self, values: list[tuple[str, int, tuple[int, int, int]]]) -> None:
        self.values = values
        total = sum(v for _, v, _ in values)
        line = self.tr("{name}: {size} ({share}%)")
        self.setToolTip(
            "\n".join(
                line.format(name=name, size=format_bytes(v), share=number(100 * v / total, 0)) for name, v, _ in values
            )
            if total
            else ""
        )
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        rect = self.rect().adjusted(0, 2, -1, -2)
        painter.setPen(QColor(160, 160, 160))
        painter.drawRect(rect)
        total = sum(v for _, v, _ in self.values)
        if not total:
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, self.tr("no step measured yet"))
            return
        x = float(rect.left())
        for _, value, colour in self.values:
            width = rect.width() * value / total
            painter.fillRect(QRectF(x, rect.top(), width, rect.height()), QColor(*colour))
            x += width
