"""A translator that marks each text with its context instead of translating it: with it installed, a test sees
which texts went through Qt's translator, under which context, and that a sentence is translated whole rather
than glued from pieces ('[CompareView]{number}. {label}: {status}' filled in), without any catalogue."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QCoreApplication, QTranslator


class MarkingTranslator(QTranslator):
    def translate(self, context, source, disambiguation=None, n=-1):  # noqa: ARG002 - Qt's signature
        return f"[{context}]{source}"

    def isEmpty(self) -> bool:  # noqa: N802 - Qt's name
        return False


@contextmanager
def marking_translator() -> Iterator[MarkingTranslator]:
    """Install a `MarkingTranslator` for the block (a QCoreApplication must exist: pytest-qt's `qapp`)."""
    translator = MarkingTranslator()
    QCoreApplication.installTranslator(translator)
    try:
        yield translator
    finally:
        QCoreApplication.removeTranslator(translator)
