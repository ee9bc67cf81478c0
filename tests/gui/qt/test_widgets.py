"""The custom input widgets: a spin box that keeps scientific values, an optional integer."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QValidator

from gpu_train_monitor.gui.qt.widgets import OptionalSpinBox, ScientificSpinBox


@pytest.fixture
def sci(qtbot) -> ScientificSpinBox:
    box = ScientificSpinBox()
    qtbot.addWidget(box)
    box.setRange(1e-8, 10.0)
    return box


@pytest.mark.parametrize(
    "value, text", [(3e-4, "0.0003"), (1e-8, "1e-08"), (0.05, "0.05"), (10.0, "10"), (1.234567e-5, "1.23457e-05")]
)
def test_values_show_without_rounding_to_zero(sci, value, text):
    sci.setValue(value)
    assert sci.value() == value
    assert sci.text() == text


@pytest.mark.parametrize(
    "text, state",
    [
        ("3e-4", QValidator.State.Acceptable),
        ("0.0003", QValidator.State.Acceptable),
        ("3e-", QValidator.State.Intermediate),
        ("3e", QValidator.State.Intermediate),
        ("", QValidator.State.Intermediate),
        ("1e-9", QValidator.State.Intermediate),
        ("20", QValidator.State.Intermediate),
        ("abc", QValidator.State.Invalid),
        ("1e-4x", QValidator.State.Invalid),
    ],
)
def test_validation_while_typing(sci, text, state):
    assert sci.validate(text, len(text))[0] == state


def test_typing_scientific_notation(qtbot, sci):
    sci.lineEdit().selectAll()
    qtbot.keyClicks(sci.lineEdit(), "2.5e-3")
    qtbot.keyClick(sci.lineEdit(), Qt.Key.Key_Return)
    assert sci.value() == 2.5e-3


def test_out_of_range_text_is_not_taken(qtbot, sci):
    sci.setValue(0.01)
    sci.lineEdit().selectAll()
    qtbot.keyClicks(sci.lineEdit(), "1e-9")  # below the minimum: never Acceptable
    qtbot.keyClick(sci.lineEdit(), Qt.Key.Key_Return)
    assert 1e-8 <= sci.value() <= 10.0


def test_arrows_step_along_1_2_5(sci):
    sci.setValue(3e-4)
    sci.stepBy(1)
    assert sci.value() == pytest.approx(5e-4)
    sci.stepBy(1)
    assert sci.value() == pytest.approx(1e-3)
    sci.stepBy(-2)
    assert sci.value() == pytest.approx(2e-4)


def test_arrows_stop_at_the_range(sci):
    sci.setValue(5.0)
    sci.stepBy(5)
    assert sci.value() == 10.0
    sci.setValue(2e-8)
    sci.stepBy(-5)
    assert sci.value() == 1e-8


def test_stepping_up_from_zero(qtbot):
    box = ScientificSpinBox()
    qtbot.addWidget(box)
    box.setRange(0.0, 1.0)
    box.setValue(0.0)
    box.stepBy(1)
    assert box.value() > 0.0
    box.stepBy(-1)
    assert box.value() < 1e-6


def test_optional_spin_box_lowest_position_means_no_limit(qtbot):
    box = OptionalSpinBox(1, 100)
    qtbot.addWidget(box)
    box.set_optional_value(None)
    assert box.optional_value() is None
    assert box.text() == "no limit"
    box.set_optional_value(1)
    assert box.optional_value() == 1 and box.text() == "1"
    box.stepBy(-1)
    assert box.optional_value() is None
    box.set_optional_value(100)
    assert box.optional_value() == 100
