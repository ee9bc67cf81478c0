"""Input widgets the stock ones lack: a spin box that keeps values like 3e-4, an optional integer, and a
guard that lets the mouse wheel change a field only while it has the keyboard focus."""

from __future__ import annotations

import math
import time

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QAbstractScrollArea, QAbstractSpinBox, QComboBox, QDoubleSpinBox, QSpinBox, QWidget


class ScientificSpinBox(QDoubleSpinBox):
    """A float spin box that shows and accepts scientific notation and steps by factors (1, 2, 5 x 10^n).

    QDoubleSpinBox rounds its value and its range to `decimals` (2 by default): with the range set first,
    1e-8 became 0.0. Setting many decimals before the range keeps 3e-4 exact, and the text shows
    '0.0003' or '3e-04' rather than '0.00'.
    """

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setDecimals(12)

    def textFromValue(self, value: float) -> str:
        return f"{value:.6g}"

    def valueFromText(self, text: str) -> float:
        try:
            return float(text.strip())
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int) -> object:
        stripped = text.strip()
        if not stripped:
            return QValidator.State.Intermediate, text, pos
        try:
            value = float(stripped)
        except ValueError:
            partial = stripped.lower().rstrip("e+-.")
            ok = partial == "" or _is_float(partial)
            return (QValidator.State.Intermediate if ok else QValidator.State.Invalid), text, pos
        if self.minimum() <= value <= self.maximum():
            return QValidator.State.Acceptable, text, pos
        return QValidator.State.Intermediate, text, pos

    def stepBy(self, steps: int) -> None:
        value = self.value()
        for _ in range(abs(steps)):
            value = _next_nice(value, up=steps > 0)
        self.setValue(min(max(value, self.minimum()), self.maximum()))


def _is_float(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _next_nice(value: float, up: bool) -> float:
    """The next value on the 1-2-5 ladder above or below `value`."""
    if value <= 0:
        return 1e-6 if up else 0.0
    exponent = math.floor(math.log10(value))
    ladder = [m * 10.0**e for e in (exponent - 1, exponent, exponent + 1) for m in (1, 2, 5)]
    if up:
        return next(v for v in ladder if v > value * (1 + 1e-9))
    return next(v for v in reversed(ladder) if v < value * (1 - 1e-9))


class OptionalSpinBox(QSpinBox):
    """An integer spin box whose lowest position means 'no limit' (None)."""

    def __init__(self, minimum: int, maximum: int, none_text: str | None = None, parent=None) -> None:
        """`none_text`: what the lowest position reads (default: 'no limit', translated)."""
        super().__init__(parent)
        self.setRange(minimum - 1, maximum)
        self.setSpecialValueText(none_text if none_text is not None else self.tr("no limit"))

    def optional_value(self) -> int | None:
        return None if self.value() == self.minimum() else self.value()

    def set_optional_value(self, value: int | None) -> None:
        self.setValue(self.minimum() if value is None else value)


class FocusedWheelOnly(QObject):
    """An event filter: the wheel over a spin box or combo box that does not have the focus scrolls what holds
    it (the form's scroll area) instead of changing its value unseen (2560 became 2554 while scrolling). A field
    that has the focus (clicked a while ago) still scrolls the form while the form is being scrolled: the wheel
    changes it only when it starts over it (Epochs "auto" became 8 when the pointer crossed it mid-scroll)."""

    SCROLLING_S = 0.6  # wheel events closer than this to the last one that scrolled the form go on scrolling it

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._scrolled_at = -1e9

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.FocusIn:
            self._scrolled_at = -1e9  # clicked or tabbed into: the wheel over it is the user's choice from now on
            return False
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, QWidget):
            return False
        now = time.monotonic()
        is_field = isinstance(watched, (QAbstractSpinBox, QComboBox))
        if not is_field:  # the form itself (over a label or a gap): it scrolls
            self._scrolled_at = now
            return False
        if watched.hasFocus() and now - self._scrolled_at > self.SCROLLING_S:
            return False  # the user's choice: a wheel that starts over the focused field
        self._scrolled_at = now
        area = watched.parentWidget()
        while area is not None and not isinstance(area, QAbstractScrollArea):
            area = area.parentWidget()
        if area is not None:  # handed on directly: Qt passes an ignored wheel up only when it came from the system
            QCoreApplication.sendEvent(area.viewport(), event)
        else:
            event.ignore()
        return True


def wheel_only_when_focused(root: QWidget) -> None:
    """Every spin box and combo box in `root` takes the wheel only once clicked or tabbed into."""
    guard = root.findChild(FocusedWheelOnly, "focusedWheelOnly")
    if guard is None:
        guard = FocusedWheelOnly(root)
        guard.setObjectName("focusedWheelOnly")
    for widget in root.findChildren(QAbstractSpinBox) + root.findChildren(QComboBox):
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # not WheelFocus: the wheel must not focus it either
        widget.removeEventFilter(guard)
        widget.installEventFilter(guard)
    root.removeEventFilter(guard)
    root.installEventFilter(guard)  # a wheel over the form's labels and gaps: the form is being scrolled
