"""User-facing errors: anything the user can fix by changing input.

The CLI turns a `UserError` into one line on stderr and exit code 2; the GUI shows it inline.
Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """An error caused by the user's input or environment, with a message that says what to do."""


class ConfigError(UserError):
    """A configuration value outside its allowed range or set; the message names the field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.detail = message  # without the field's name: a `Message` when raised with one (the window translates it)


class DatasetError(UserError):
    """A dataset that is missing, corrupt or does not fit where it was asked to go."""
