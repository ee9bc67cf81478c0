"""A `Message` as JSON, for texts that cross a process boundary as JSON (a batch-size trial's answer, the line
a data-parallel rank leaves on how it ended): the receiving side gets the template and values back, so the
window can still translate the text. A plain `str` travels as itself."""

from __future__ import annotations

from typing import Any

from core.message import Message

_rebuilt = Message  # a template read back is no new text: the translation source has it from where it was written


def message_to_json(text: Any) -> Any:
    """{"template": ..., "params": {...}} for a `Message` (its params alike); any other text as it is."""
    if isinstance(text, Message):
        return {"template": text.template, "params": {name: _param_to_json(value) for name, value in text.params.items()}}
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
    if not (isinstance(value, dict) and isinstance(value.get("template"), str) and isinstance(value.get("params"), dict)):
        return value
    params = {str(name): message_from_json(param) for name, param in value["params"].items()}
    try:
        return _rebuilt(value["template"], **params)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError):
        return None
