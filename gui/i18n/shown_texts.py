"""The texts a window shows now, said again in the language installed since.

`gpu_train_monitor.gui.window.retranslate` keeps the texts a window sets once, when it is built. Texts set later, as a
run goes (plot titles and legends, a panel's message, a tooltip that names the device), are found here instead:
each one shown is looked up among the catalogue's messages as the previous language says them (English:
the source; another: its translation), and the message is said again with `QCoreApplication.translate`.
A message with fields ("Phase peaks at step {step}: …") is matched as a pattern and its values are put
back (a value that is itself a message, such as a state's word, is said again too; numbers keep their
digits until their widget's next update). A multi-line text is looked up line by line. A text that is no
message (a path, a model's name, a number) is left as it is. The log's lines are not touched: they are
its history.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QSignalBlocker, Qt
from PySide6.QtGui import QAction, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QSpinBox,
    QTableWidget,
    QTabWidget,
    QTextEdit,
    QWidget,
)

from gpu_train_monitor.gui.i18n import language as i18n

FIELD = re.compile(r"\{(\w*)(![rsa])?(:[^{}]*)?\}")
LETTER = re.compile(r"[^\W\d_]")


@dataclass(frozen=True)
class CatalogueMessage:
    context: str
    source: str
    comment: str | None

    def say(self) -> str:
        """The message in the language installed now."""
        return QCoreApplication.translate(self.context, self.source, self.comment)


class Catalogue:
    """The app's messages as one language says them, to find which message a shown text is."""

    def __init__(self, said: list[tuple[str, CatalogueMessage]]) -> None:
        self.exact: dict[str, CatalogueMessage] = {}
        patterns: list[tuple[int, str, re.Pattern[str], CatalogueMessage]] = []
        for text, message in said:
            self.exact.setdefault(text, message)
            literal_text = FIELD.sub("", text)
            if FIELD.search(text) and len(LETTER.findall(literal_text)) >= 3:  # "a {b}" would match too much
                longest = max(FIELD.split(text)[::4], key=len)
                patterns.append((len(literal_text), longest, _pattern(text), message))
        patterns.sort(key=lambda pattern: -pattern[0])  # the most specific first
        self.patterns = [(longest, pattern, message) for _, longest, pattern, message in patterns]

    def say_again(self, text: str) -> str | None:
        """`text` in the language installed now, or None when it is no message of this catalogue."""
        if not text or not text.strip():
            return None
        message = self.exact.get(text)
        if message is not None:
            return message.say()
        for literal, pattern, message in self.patterns:
            if literal in text and (match := pattern.fullmatch(text)) is not None:
                values = {name: self.say_again(value) or value for name, value in match.groupdict().items()}
                return _filled(message.say(), values)
        if "\n" in text:
            lines = text.split("\n")
            again = [self.say_again(line) for line in lines]
            if any(line is not None for line in again):
                return "\n".join(line if new is None else new for line, new in zip(lines, again))
        return None


def _filled(template: str, values: dict[str, str]) -> str:
    """`template` with its fields replaced by `values` as shown (digits already formatted: no format spec)."""
    return FIELD.sub(lambda field: values.get(field[1], field[0]), template)


def _pattern(text: str) -> re.Pattern[str]:
    parts, seen, position = [], set(), 0
    for field in FIELD.finditer(text):
        parts.append(re.escape(text[position : field.start()]))
        name = field[1]
        if name and name.isidentifier() and name not in seen:
            parts.append(f"(?P<{name}>.+?)")
            seen.add(name)
        else:
            parts.append(f"(?P={name})" if name in seen else ".+?")
        position = field.end()
    parts.append(re.escape(text[position:]))
    return re.compile("".join(parts), re.DOTALL)


@lru_cache(maxsize=4)
def catalogue(language: str) -> Catalogue:
    """The messages of the app's catalogue for `language`, keyed by how `language` says them."""
    path = i18n.translation_source(i18n.CHINESE if language == i18n.ENGLISH else language)
    said: list[tuple[str, CatalogueMessage]] = []
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return Catalogue(said)
    for context in root.iter("context"):
        name = context.findtext("name") or ""
        for element in context.iter("message"):
            source = element.findtext("source") or ""
            message = CatalogueMessage(name, source, element.findtext("comment"))
            translation = element.find("translation")
            if language == i18n.ENGLISH:
                said.append((source, message))
            elif translation is not None and translation.text and translation.get("type") is None:
                said.append((translation.text, message))
    return Catalogue(said)


def _again(catalogue_: Catalogue, text: str, setter: Callable[[str], None]) -> None:
    new = catalogue_.say_again(text)
    if new is not None and new != text:
        setter(new)


def _plots(widget: QWidget) -> Iterator[pg.PlotItem]:
    if isinstance(widget, pg.PlotWidget):
        yield widget.getPlotItem()
    elif isinstance(widget, pg.GraphicsLayoutWidget):
        yield from (item for item in widget.ci.items if isinstance(item, pg.PlotItem))


def _say_plot_again(said: Catalogue, plot: pg.PlotItem) -> None:
    _again(said, plot.titleLabel.text or "", plot.setTitle)
    for name in plot.axes:
        axis = plot.getAxis(name)
        _again(said, axis.labelText or "", lambda text, axis=axis: axis.setLabel(text, units=axis.labelUnits or None))
    if plot.legend is not None:
        for _, label in plot.legend.items:
            _again(said, label.text or "", label.setText)


def _say_widget_again(said: Catalogue, widget: QWidget) -> None:
    _again(said, widget.toolTip(), widget.setToolTip)
    _again(said, widget.statusTip(), widget.setStatusTip)
    if isinstance(widget, QLabel | QAbstractButton):
        _again(said, widget.text(), widget.setText)
    elif isinstance(widget, QGroupBox):
        _again(said, widget.title(), widget.setTitle)
    elif isinstance(widget, QLineEdit | QPlainTextEdit | QTextEdit):  # a text box's lines are the log's history
        _again(said, widget.placeholderText(), widget.setPlaceholderText)
    elif isinstance(widget, QComboBox) and not widget.isEditable():  # an editable one's text is the user's
        blocker = QSignalBlocker(widget)  # the words change, not the choice: no "changed" for the form
        for index in range(widget.count()):
            _again(said, widget.itemText(index), lambda text, index=index: widget.setItemText(index, text))
            tip = widget.itemData(index, Qt.ItemDataRole.ToolTipRole)
            if isinstance(tip, str):
                _again(
                    said, tip, lambda text, index=index: widget.setItemData(index, text, Qt.ItemDataRole.ToolTipRole)
                )
        blocker.unblock()
    elif isinstance(widget, QSpinBox | QDoubleSpinBox):
        _again(said, widget.specialValueText(), widget.setSpecialValueText)
        _again(said, widget.suffix(), widget.setSuffix)
    elif isinstance(widget, QTabWidget):
        for index in range(widget.count()):
            _again(said, widget.tabText(index), lambda text, index=index: widget.setTabText(index, text))
            _again(said, widget.tabToolTip(index), lambda text, index=index: widget.setTabToolTip(index, text))
    elif isinstance(widget, QTableWidget):
        for column in range(widget.columnCount()):
            item = widget.horizontalHeaderItem(column)
            if item is not None:
                _again(said, item.text(), item.setText)
    elif isinstance(widget, QAbstractItemView) and widget.model() is not None:
        model = widget.model()
        columns = model.columnCount()
        if isinstance(model, QStandardItemModel):
            for column in range(columns):
                _again(
                    said,
                    str(model.headerData(column, Qt.Orientation.Horizontal) or ""),
                    lambda text, column=column: model.setHeaderData(column, Qt.Orientation.Horizontal, text),
                )
        elif columns:  # a model that says its headers when asked: ask again
            model.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, columns - 1)
    for plot in _plots(widget):
        _say_plot_again(said, plot)


def _say_action_again(said: Catalogue, action: QAction) -> None:
    plain_tip = action.toolTip() == action.text().replace("&", "")  # Qt's default tooltip: the text's
    _again(said, action.text(), action.setText)
    if not plain_tip:
        _again(said, action.toolTip(), action.setToolTip)
    _again(said, action.statusTip(), action.setStatusTip)


def say_shown_texts_again(window: QWidget, previous: str) -> None:
    """Every text `window` shows in `previous` language, said again in the language installed now."""
    if previous == i18n.active():
        return
    said = catalogue(previous)
    _again(said, window.windowTitle(), window.setWindowTitle)
    for widget in [window, *window.findChildren(QWidget)]:
        _say_widget_again(said, widget)
        if isinstance(widget, QMenu):
            _again(said, widget.title(), widget.setTitle)
    for action in window.findChildren(QAction):
        _say_action_again(said, action)
