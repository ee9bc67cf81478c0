"""A translator for tests: Qt's translator reading a table instead of a compiled catalogue.

The committed catalogue changes as texts change; a test that checks how a widget behaves when its texts
are Chinese names the few translations it needs here, in the contexts the code translates them in.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from PySide6.QtCore import QCoreApplication, QTranslator


class TableTranslator(QTranslator):
    """(context, English) -> translation, as a compiled catalogue answers: a text not in the table stays English."""

    def __init__(self, table: Mapping[tuple[str, str], str]) -> None:
        super().__init__()
        self.table = dict(table)

    def translate(self, context, source, disambiguation=None, n=-1):  # noqa: ARG002 - Qt's signature
        return self.table.get((context, source))

    def isEmpty(self) -> bool:  # noqa: N802 - Qt's name
        return False


@contextmanager
def translated(table: Mapping[tuple[str, str], str]) -> Iterator[TableTranslator]:
    """Qt translates with `table` inside the block (a QCoreApplication must exist)."""
    translator = TableTranslator(table)
    QCoreApplication.installTranslator(translator)
    try:
        yield translator
    finally:
        QCoreApplication.removeTranslator(translator)
