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


def date_time(epoch_s: float, seconds: bool = False) -> str:
    """A wall-clock moment, written the locale's short way (date and time)."""
    moment = QDateTime.fromSecsSinceEpoch(int(epoch_s))
    fmt = QLocale().dateTimeFormat(QLocale.FormatType.ShortFormat)
    if seconds and "ss" not in fmt:
        fmt = fmt.replace("mm", "mm:ss", 1)
    return QLocale().toString(moment, fmt)


def clock(epoch_s: float | None = None) -> str:
    """The time of day with seconds (24-hour, as a log's time column), for now or `epoch_s`."""
    return time.strftime("%H:%M:%S", time.localtime(time.time() if epoch_s is None else epoch_s))
