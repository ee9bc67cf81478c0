"""Which modules hold the step's memory: the largest blocks of the model as horizontal bars (name, bytes, share of
the step), each opening to its layers, and one row for the batch, the loss and what ran in no module.

A run is split by module on a few sampled steps (its second, then about once a minute); until one arrives, the
step as it was predicted is shown, said as such. The rows add up to the step's total.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.events.attention_bytes import attention_bytes
from gpu_train_monitor.events.module_bytes import MODULE_PARTS, OUTSIDE, ModuleBytes, modules_total
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.qt.locale_format import integer, number

TOP = 8  # blocks shown by name; the rest share one row
SHARE_ROLE = Qt.ItemDataRole.UserRole + 1  # a row's share of the step, 0..1: the bar's length


class ShareBar(QStyledItemDelegate):
    """Paints a cell's share of the step as a bar under its text."""

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        share = index.data(SHARE_ROLE)
        if option.state & QStyle.StateFlag.State_Selected:
            painter.fillRect(option.rect, option.palette.highlight())
        if isinstance(share, float) and share > 0:
            rect = option.rect.adjusted(2, 3, -2, -3)
            bar = QRect(rect.left(), rect.top(), max(round(rect.width() * min(share, 1.0)), 1), rect.height())
            painter.fillRect(bar, QColor(*palette.TAB_BLUE, 150))
        painter.drawText(option.rect.adjusted(6, 0, -6, 0), Qt.AlignmentFlag.AlignVCenter, str(index.data() or ""))


class ModuleChart(QWidget):
    """`show_measured(rows, step)` for an attributed breakdown; `offer_predicted(rows)` shows a prediction's until
    then; `clear()` at a new run."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setObjectName("moduleChart")
        self.tree.setColumnCount(3)
        self.tree.setItemDelegateForColumn(2, ShareBar(self.tree))
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setMinimumHeight(180)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.tree)
        self.attention = QLabel()  # a transformer's attention modules, summed: hidden for a model without any
        self.attention.setObjectName("attentionShare")
        self.attention.setWordWrap(True)
        layout.addWidget(self.attention)
        self.rows: tuple[ModuleBytes, ...] = ()
        self.step: int | None = None  # the measured step shown; None: a prediction (or nothing)
        self._predicted: tuple[ModuleBytes, ...] = ()
        self._set_headers()
        self.hide()

    def clear(self) -> None:
        self.rows, self.step, self._predicted = (), None, ()
        self.tree.clear()
        self.hide()

    def show_measured(self, rows: Sequence[ModuleBytes], step: int) -> None:
        self.rows, self.step = tuple(rows), step
        self._fill()

    def offer_predicted(self, rows: Sequence[ModuleBytes]) -> None:
        """A prediction's rows: shown while no measured step by module has come."""
        self._predicted = tuple(rows)
        if self.step is None and self._predicted:
            self.rows = self._predicted
            self._fill()

    def show_again(self) -> None:
        """Said again in the language now chosen."""
        self._set_headers()
        if self.rows:
            self._fill()

    def _set_headers(self) -> None:
        self.tree.setHeaderLabels([self.tr("Module"), self.tr("Size"), self.tr("Share of the step")])

    def _fill(self) -> None:
        rows = self.rows
        total = modules_total(rows)
        if self.step is None:
            self.caption.setText(
                self.tr("By module, predicted: the largest blocks of the model (open one for its layers)")
            )
        else:
            self.caption.setText(
                self.tr("By module at step {step}: the largest blocks of the model (open one for its layers)").format(
                    step=integer(self.step)
                )
            )
        self.caption.setToolTip(
            self.tr(
                "Each module's parameters, gradients and optimizer state, the activations it saved for backward and "
                "what else it made that is alive at the step's peak. The batch, the loss and what ran in no module "
                "are one row; the rows add up to {total}."
            ).format(total=format_bytes(total))
        )
        self.tree.clear()
        inside = sorted((r for r in rows if r.name != OUTSIDE), key=lambda r: r.total_bytes, reverse=True)
        shown, rest = inside[:TOP], inside[TOP:]
        for row in shown:
            item = self._item(row.name, row, total)
            for layer in row.layers:
                item.addChild(self._item(layer.name, layer, total))
            self.tree.addTopLevelItem(item)
        if rest:
            other = ModuleBytes(
                "",
                **{key: sum(getattr(r, key) for r in rest) for key in MODULE_PARTS},  # type: ignore[arg-type]
            )
            self.tree.addTopLevelItem(
                self._item(self.tr("{count} other modules").format(count=integer(len(rest))), other, total)
            )
        outside = next((r for r in rows if r.name == OUTSIDE), None)
        if outside is not None:
            self.tree.addTopLevelItem(self._item(self.tr("(batch, loss, outside modules)"), outside, total))
        self._say_attention(rows)
        self.show()

    def _say_attention(self, rows: Sequence[ModuleBytes]) -> None:
        """Attention's total share of the step (its modules in every block), for a transformer."""
        found = attention_bytes(rows)
        self.attention.setVisible(found is not None)
        if found is None:
            return
        self.attention.setText(
            self.tr("Attention: {size} ({share}% of the step's peak), {activations} of it activations").format(
                size=format_bytes(found.total_bytes),
                share=number(100 * found.share, 0),
                activations=format_bytes(found.activation_bytes),
            )
        )
        self.attention.setToolTip(
            self.tr(
                "The attention modules of every block summed, their layers included: weights, gradients, optimizer "
                "state, and the activations they keep for backward, which grow with the sequence length (the plain "
                "softmax of QK^T keeps each head's sequence x sequence matrix)"
            )
        )

    def _item(self, name: str, row: ModuleBytes, total: int) -> QTreeWidgetItem:
        share = row.total_bytes / total if total else 0.0
        item = QTreeWidgetItem([name, format_bytes(row.total_bytes), f"{number(100 * share, 0)}%"])
        item.setData(2, SHARE_ROLE, share)
        item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        parts = self.tr(
            "activations {activations} · parameters {params} · gradients {grads} · optimizer {optimizer} · "
            "temporaries {temporaries}"
        ).format(**{key.removesuffix("_bytes"): format_bytes(getattr(row, key)) for key in MODULE_PARTS})
        for column in range(3):
            item.setToolTip(column, parts)
        return item
