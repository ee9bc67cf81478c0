"""One setting checked against its bound (gpu_train_monitor.config.bounds): coerced to the field's type, or a
ConfigError that names the field and says what it may be, in words the CLI and the window both show."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..base.errors import ConfigError
from ..base.text import Message
from ..base.user_code import SPEC_FIELDS, SPEC_FORM, check_spec, is_spec
from .bounds import bound_of
from .run_checks import check_name_lengths
from .sequences import TEXT_PREFIX, check_text_file_name


def describe_range(name: str) -> Message:
    """'an integer from 1 to 65536', 'one of sgd, adamw', ...: what the user may enter for `name`."""
    bound = bound_of(name)
    if bound.choices:
        if name == "dataset":
            return Message(
                "one of {choices}, text:PATH (a text file), or {spec_form}",
                choices=", ".join(bound.choices),
                spec_form=SPEC_FORM,
            )
        if name in SPEC_FIELDS:
            return Message("one of {choices}, or {spec_form}", choices=", ".join(bound.choices), spec_form=SPEC_FORM)
        return Message("one of {choices}", choices=", ".join(bound.choices))
    if bound.kind is bool:
        return Message("true or false")
    if bound.kind is int and bound.minimum is not None:
        return Message(
            "an integer from {minimum} to {maximum}", minimum=_fmt(bound.minimum), maximum=_fmt(bound.maximum)
        )
    if bound.kind is float and bound.minimum is not None:
        return Message("a number from {minimum} to {maximum}", minimum=_fmt(bound.minimum), maximum=_fmt(bound.maximum))
    return Message("a string")


def _fmt(value: float | None) -> str:
    if value is None:
        return Message("any")
    return f"{value:g}" if isinstance(value, float) else str(value)


def validate_field(name: str, value: Any) -> Any:
    """Return `value` coerced to the field's type, or raise `ConfigError` naming the field and its range."""
    bound = bound_of(name)
    if value is None:
        if bound.optional:
            return None
        raise ConfigError(name, Message("a value is required ({allowed})", allowed=describe_range(name)))
    if bound.kind is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(name, Message("must be true or false, got {value}", value=repr(value)))
    if bound.kind is int:
        # is_integer() is False for nan/inf (which int() would raise on); big ints never go through float()
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or (isinstance(value, float) and not value.is_integer())
        ):
            raise _out_of_range(name, value)
        value = int(value)
    elif bound.kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise _out_of_range(name, value)
        value = float(value)
    elif bound.kind is str:
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(
                name, Message("must be a non-empty string ({help}), got {value}", help=bound.help, value=repr(value))
            )
        value = value.strip()
        # syntax only: the run imports it (gpu_train_monitor.base.user_code)
        if name in SPEC_FIELDS and is_spec(value):
            return check_spec(name, value)
        if name == "dataset" and value.startswith(TEXT_PREFIX):  # a text file: whether it is one, the run finds
            value = check_text_file_name(value)
            check_name_lengths(name, value[len(TEXT_PREFIX) :])
            return value
    if bound.choices and value not in bound.choices:
        raise _out_of_range(name, value)
    if bound.minimum is not None and value < bound.minimum or bound.maximum is not None and value > bound.maximum:
        raise _out_of_range(name, value)
    if name == "model":
        value = value.lower()
    if name == "data_dir":
        value = str(Path(value).expanduser())
        check_name_lengths(name, value)
    return value


def _out_of_range(name: str, value: Any) -> ConfigError:
    return ConfigError(name, Message("must be {allowed}, got {value}", allowed=describe_range(name), value=repr(value)))
