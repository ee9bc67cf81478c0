"""User-facing errors: anything the user can fix by changing input.

The CLI turns a `UserError` into one line on stderr and exit code 2; the GUI shows it inline.
Anything else that escapes is a bug and keeps its traceback. Their messages are `gpu_train_monitor.base.text.Message`s
(English text that keeps its template and values), so the window can show them in the user's language.
"""

from __future__ import annotations

from typing import Any

from .text import Message


class UserError(Exception):
    """An error caused by the user's input or environment, with a message that says what to do."""


class ConfigError(UserError):
    """A configuration value outside its allowed range or set; the message names the field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(Message("{field}: {detail}", field=field, detail=message))
        self.field = field
        self.detail = message  # without the field's name: a `Message` when raised with one (the window translates it)

    def __reduce__(self) -> tuple[Any, ...]:
        # (field, detail), not the joined text: crossing a process (a batch-size trial) keeps both parts
        return (type(self), (self.field, self.detail))


class DatasetError(UserError):
    """A dataset that is missing, corrupt or does not fit where it was asked to go."""
