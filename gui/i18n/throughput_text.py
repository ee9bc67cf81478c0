"""A run's throughput unit as the window says it: images/s, tokens/s (a text run, a watched language model) or
samples/s (another watched loop), in the user's language (`gpu_train_monitor.config.sequences.throughput` decides
which a run has). One table of the words, as the status words have theirs."""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from gpu_train_monitor.gui.qt.locale_format import number

UNITS = {  # unit: (the unit, a plot's axis title, the stats panel's row, its tooltip), English: translated where shown
    "images/s": (
        QT_TRANSLATE_NOOP("throughput_text", "images/s"),
        QT_TRANSLATE_NOOP("throughput_text", "Training images per second"),
        QT_TRANSLATE_NOOP("throughput_text", "Images/s (median)"),
        QT_TRANSLATE_NOOP(
            "throughput_text",
            "Median training images per second over the reports after the first (the warm-up): the figure of "
            "the run's end in the log and in the Runs table",
        ),
    ),
    "tokens/s": (
        QT_TRANSLATE_NOOP("throughput_text", "tokens/s"),
        QT_TRANSLATE_NOOP("throughput_text", "Training tokens per second"),
        QT_TRANSLATE_NOOP("throughput_text", "Tokens/s (median)"),
        QT_TRANSLATE_NOOP(
            "throughput_text",
            "Median training tokens per second (sequences x sequence length) over the reports after the first "
            "(the warm-up): the figure of the run's end in the log and in the Runs table",
        ),
    ),
    "samples/s": (
        QT_TRANSLATE_NOOP("throughput_text", "samples/s"),
        QT_TRANSLATE_NOOP("throughput_text", "Training samples per second"),
        QT_TRANSLATE_NOOP("throughput_text", "Samples/s (median)"),
        QT_TRANSLATE_NOOP(
            "throughput_text",
            "Median training samples per second over the reports after the first (the warm-up): the figure of "
            "the run's end in the log and in the Runs table",
        ),
    ),
}


def _said(unit: str, which: int) -> str:
    return QCoreApplication.translate("throughput_text", UNITS.get(unit, UNITS["images/s"])[which])


def unit_text(unit: str) -> str:
    """'images/s', 'tokens/s', 'samples/s' in the user's language."""
    return _said(unit, 0)


def plot_title(unit: str) -> str:
    """'Training tokens per second': a throughput plot's title."""
    return _said(unit, 1)


def speed_label(unit: str) -> str:
    """'Tokens/s (median)': the stats panel's speed row."""
    return _said(unit, 2)


def speed_tooltip(unit: str) -> str:
    return _said(unit, 3)


def speed_text(value: float | None, unit: str) -> str:
    """'1,234 images/s', '45,678 tokens/s' in the locale's numbers; '–' without a figure."""
    return "–" if value is None else f"{number(value, 0)} {unit_text(unit)}"
