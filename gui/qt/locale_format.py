"""Numbers, dates and times as the user's locale writes them (Qt's `QLocale`, set from the language choice).

Byte sizes keep their units (kB, MB, GB) in every language: `gpu_train_monitor.base.text.format_bytes` writes them, and
its number is the only part a locale could change.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QDateTime, QLocale


def number(value: float, decimals: int = 1) -> str:
    """`value` with `decimals` digits after the locale's decimal point and its digit grouping."""
    return QLocale().toString(float(value), "f", decimals)


def integer(value: int) -> str:
    """A whole number with the locale's digit grouping (12,345)."""
    return QLocale().toString(int(value))


CLOCK_FORMAT = "HH:mm:ss"  # the time of day everywhere the window writes one: 24-hour, as the log's time column


def date_time(epoch_s: float, seconds: bool = False) -> str:
    """A wall-clock moment: the locale's short date, then the time of day as the log writes it (24-hour; to the
    minute unless `seconds`), so the Runs table, a run's window and the log write the same moment alike."""
    moment = QDateTime.fromSecsSinceEpoch(int(epoch_s))
    date = QLocale().toString(moment.date(), QLocale.FormatType.ShortFormat)
    return f"{date} {moment.time().toString(CLOCK_FORMAT if seconds else CLOCK_FORMAT[:5])}"


def clock(epoch_s: float | None = None) -> str:
    """The time of day with seconds (24-hour, as a log's time column), for now or `epoch_s`: the time `date_time`
    writes after the date."""
    moment = QDateTime.fromSecsSinceEpoch(int(time.time() if epoch_s is None else epoch_s))
    return moment.time().toString(CLOCK_FORMAT)
