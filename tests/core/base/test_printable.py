"""`printable`: text from another machine shown on a terminal without the terminal obeying what is in it."""

from __future__ import annotations

import pytest

from gpu_train_monitor.base.text import Message, printable


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("resnet\x1b[2J", "resnet\\x1b[2J"),  # ESC: clear the screen
        ("/data/a\rb", "/data/a\\rb"),  # a carriage return rewrites the line from its start
        ("two\nlines", "two\\nlines"),
        ("bell\x07 nul\x00 del\x7f", "bell\\x07 nul\\x00 del\\x7f"),
        ("csi\x9b31m", "csi\\x9b31m"),  # C1: one byte CSI
        ("tab\tstays", "tab\tstays"),
        ("训练 ü", "训练 ü"),
    ],
)
def test_control_characters_are_shown_escaped(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_multi_line_output_keeps_its_newlines_only() -> None:
    assert printable("run 1: x\x1b[2J\n  note a\rb", newlines=True) == "run 1: x\\x1b[2J\n  note a\\rb"


def test_text_without_them_is_the_same_object() -> None:
    message = Message("no run {run_id}", run_id=3)
    assert printable(message) is message  # the window can still translate it
