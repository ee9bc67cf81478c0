"""Text for people: it keeps its template and values, so the window can show it in the user's language.

`core` never imports Qt, and the CLI's output stays English (scripts parse it). A `Message` is therefore an
ordinary English `str` (everything that prints, logs, stores or compares it keeps working) that also
carries the template it was rendered from and the values filled in. The window translates the template
with Qt's translator and fills in the same values: the translation works from structured fields, never by
parsing English sentences.

Qt's `pyside6-lupdate` finds the templates: it is run with `-tr-function-alias QT_TR_NOOP+=Message`, so
every `Message("literal template", ...)` call lands in the translation source (in the context "" that
`gpu_train_monitor.gui.qt.core_text` translates from). A template must therefore be a string literal at the call site.

Also here, because they are the same concern:
- a `Message` as JSON, for texts that cross a process boundary (a batch-size trial's answer, the line a
  data-parallel rank leaves on how it ended): the receiving side gets the template and values back, so the
  window can still translate the text; a plain `str` travels as itself;
- lists inside sentences ('a; b; c', 'x= and y=') as nested Messages: a list glued with English separators
  would reach the window as one untranslatable string, while nesting keeps each part translatable and lets
  the separators become the user's language's own (Chinese punctuation, 和);
- human-readable byte counts, shared by the CLI, the log and the window's axes;
- `printable`: text another machine wrote (a run's name, a path, an agent's error) made safe to print on a
  terminal, which would otherwise obey the escape sequences in it (clear the screen, move the cursor, rewrite
  the line a carriage return goes back over).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")  # C0 (tab aside), DEL and C1: what a terminal obeys
_CONTROL_BUT_NEWLINE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


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


_rebuilt = Message  # a template read back is no new text: the translation source has it from where it was written


def message_to_json(text: Any) -> Any:
    """{"template": ..., "params": {...}} for a `Message` (its params alike); any other text as it is."""
    if isinstance(text, Message):
        return {
            "template": text.template,
            "params": {name: _param_to_json(value) for name, value in text.params.items()},
        }
    return text


def _param_to_json(value: Any) -> Any:
    if isinstance(value, Message):
        return message_to_json(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return str(value)  # a plain str stays one; anything else is already text in the English it rendered


def message_from_json(value: Any) -> Any:
    """The `Message` that `message_to_json` wrote, or `value` as it is (a str, or something not written so).
    A template whose fields the params do not fill (a file edited by hand) comes back as None."""
    if not (
        isinstance(value, dict) and isinstance(value.get("template"), str) and isinstance(value.get("params"), dict)
    ):
        return value
    params = {str(name): message_from_json(param) for name, param in value["params"].items()}
    try:
        return _rebuilt(value["template"], **params)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError):
        return None


def format_bytes(n: int | float | None) -> str:
    """1234567 -> '1.23 MB' (decimal units, as nvidia-smi's MiB are not what most people read)."""
    if n is None:
        return "?"
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


def semicolon_list(items: Sequence[str]) -> str:
    """'a; b; c' (empty for no items)."""
    if len(items) <= 1:
        return items[0] if items else ""
    return Message("{first}; {second}", first=semicolon_list(items[:-1]), second=items[-1])


def and_list(items: Sequence[str]) -> str:
    """'a', 'a and b', 'a and b and c' (empty for no items)."""
    if len(items) <= 1:
        return items[0] if items else ""
    return Message("{first} and {second}", first=and_list(items[:-1]), second=items[-1])


def printable(text: str, *, newlines: bool = False) -> str:
    """`text` with every control character a terminal would act on shown escaped, as Python writes it: ESC as
    `\\x1b`, a carriage return as `\\r`, a newline as `\\n` unless `newlines` (multi-line output, where a newline
    is what it says). Tabs stay. Text without any is returned as it is (a `Message` keeps its structure)."""
    pattern = _CONTROL_BUT_NEWLINE if newlines else _CONTROL
    if not pattern.search(text):
        return text
    return pattern.sub(lambda match: repr(match.group())[1:-1], str(text))
