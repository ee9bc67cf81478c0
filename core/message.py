"""Text for people that keeps its template and values, so the window can show it in the user's language.

`core` never imports Qt, and the CLI's output stays English (scripts parse it). A `Message` is therefore an
ordinary English `str` (everything that prints, logs, stores or compares it keeps working) that also
carries the template it was rendered from and the values filled in. The window translates the template
with Qt's translator and fills in the same values: the translation works from structured fields, never by
parsing English sentences.

Qt's `pyside6-lupdate` finds the templates: it is run with `-tr-function-alias QT_TR_NOOP+=Message`, so
every `Message("literal template", ...)` call lands in the translation source (in the context "" that
`gui.core_text` translates from). A template must therefore be a string literal at the call site.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class Message(str):
    """English text rendered from `template` (a `str.format` template with named fields) and `params`.

    `params` hold plain values (str, int, float, None) or other `Message`s, which are translated in turn.
    """

    template: str
    params: Mapping[str, Any]

    def __new__(cls, template: str, /, **params: Any) -> Message:
        text = super().__new__(cls, template.format(**params) if params else template)
        text.template = template
        text.params = dict(params)
        return text

    def __reduce__(self) -> tuple[Any, ...]:
        # events cross processes (a data-parallel run's relay queue): keep the structure, not only the text
        return (_rebuild, (self.template, self.params))

    def __repr__(self) -> str:
        return f"Message({self.template!r}, **{self.params!r})"


def _rebuild(template: str, params: Mapping[str, Any]) -> Message:
    return Message(template, **params)


def message_of(error: BaseException) -> str:
    """The error's text for people: its `Message` when it was raised with one (keeps the structure)."""
    if len(error.args) == 1 and isinstance(error.args[0], Message):
        return error.args[0]
    return str(error)  # not args[0]: a KeyError's text is its key's repr
