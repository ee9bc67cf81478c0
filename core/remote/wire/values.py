"""Core's own values as JSON and back, for what crosses the connection whole: a comparison's events, a finder's
trials and its answer, which the window and the CLI then show with the code they show local ones with.

`encode` writes a dataclass as `{"__type__": "StepsReported", <fields>}`, a `Message` as `{"__message__": ...}`
(its template and params, so it still translates on the other side), NaN and infinities as
`{"__float__": "nan"}` (strict JSON has none: a diverged run's losses hold them), a tuple of 4 or more floats that
float32 holds exactly (a report's losses) as `{"__f32__": <base64>}`, other tuples and lists as lists and a
mapping whose keys are not all text as `{"__map__": [[key, value], ...]}`. `decode` turns that back, building only
the dataclasses of the modules in `KNOWN_MODULES` (nothing the other side names is imported or called), lists as
tuples (the events' own sequences are tuples). A field this version does not know is left out (the other side
may be newer); a type it does not know is a ProtocolError.
"""

from __future__ import annotations

import array
import base64
import dataclasses
import importlib
import math
import numbers
import sys
from collections.abc import Mapping
from typing import Any

from ...base.errors import UserError
from ...base.text import Message, message_from_json, message_to_json
from .protocol import BAD_REQUEST, ProtocolError

KNOWN_MODULES = (
    "gpu_train_monitor.events.events",
    "gpu_train_monitor.events.module_bytes",
    "gpu_train_monitor.events.step_timeline",
    "gpu_train_monitor.events.summary",
    "gpu_train_monitor.compare.events",
    "gpu_train_monitor.compare.plan",
    "gpu_train_monitor.compare.result",
    "gpu_train_monitor.finder.search",
    "gpu_train_monitor.config.run_config",
)
TYPE, MESSAGE, FLOAT, MAP, FLOAT32 = "__type__", "__message__", "__float__", "__map__", "__f32__"
PACKED_FROM = 4  # a tuple of this many floats or more, each a float32 exactly (a report's losses), goes packed
_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _known_types() -> dict[str, type]:
    """Every dataclass defined in `KNOWN_MODULES`, by class name (names are unique across them: checked)."""
    found: dict[str, type] = {}
    for name in KNOWN_MODULES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == module.__name__:
                if found.setdefault(value.__name__, value) is not value:
                    raise RuntimeError(f"two known dataclasses are named {value.__name__}")
    return found


_types: dict[str, type] | None = None


def known_types() -> dict[str, type]:
    global _types
    if _types is None:
        _types = _known_types()
    return _types


def encode(value: Any) -> Any:
    """`value` as JSON-ready data; TypeError for a value of a kind nothing here writes."""
    if value is None or isinstance(value, (bool, str)) and not isinstance(value, Message):
        return value
    if isinstance(value, Message):
        return {MESSAGE: message_to_json(value)}
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isfinite(number):
            return number
        return {FLOAT: "nan" if math.isnan(number) else ("inf" if number > 0 else "-inf")}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if known_types().get(name) is not type(value):
            raise TypeError(f"{name} is not a type the connection carries")
        return {TYPE: name, **{f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, (tuple, list)):
        packed = _packed(value) if isinstance(value, tuple) and len(value) >= PACKED_FROM else None
        return packed if packed is not None else [encode(item) for item in value]
    if isinstance(value, Mapping):
        if all(isinstance(key, str) and not key.startswith("__") for key in value):
            return {key: encode(item) for key, item in value.items()}
        return {MAP: [[encode(key), encode(item)] for key, item in value.items()]}
    raise TypeError(f"{type(value).__name__} is not a value the connection carries")


def decode(data: Any) -> Any:
    """What `encode` wrote, as the values it was; ProtocolError (bad_request) for what it never writes."""
    if isinstance(data, list):
        return tuple(decode(item) for item in data)
    if not isinstance(data, dict):
        return data
    if TYPE in data:
        return _dataclass(data)
    if MESSAGE in data:
        text = message_from_json(data[MESSAGE])
        if not isinstance(text, str):
            raise _unreadable(Message("a message whose template and values do not match"))
        return text
    if FLOAT in data:
        if data[FLOAT] not in _FLOATS:
            raise _unreadable(Message("a number written as {value}", value=repr(data[FLOAT])))
        return _FLOATS[data[FLOAT]]
    if FLOAT32 in data:
        try:
            raw = base64.b64decode(data[FLOAT32], validate=True)
        except (TypeError, ValueError):
            return _bad_floats()
        if len(raw) % 4:
            return _bad_floats()
        floats = array.array("f", raw)
        if sys.byteorder != "little":
            floats.byteswap()
        return tuple(floats.tolist())
    if MAP in data:
        pairs = data[MAP]
        if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise _unreadable(Message("a mapping that is not a list of pairs"))
        return {_hashable(decode(key)): decode(item) for key, item in pairs}
    return {key: decode(item) for key, item in data.items()}


def _packed(values: tuple[Any, ...]) -> dict[str, str] | None:
    """`values` as little-endian float32 in base64 (5.3 B each, where a float's JSON takes up to 24) when every one
    is a float that float32 holds exactly (as a loss read from a float32 tensor is); else None."""
    if not all(type(item) is float for item in values):
        return None
    packed = array.array("f", values)
    if any(a != b and not (math.isnan(a) and math.isnan(b)) for a, b in zip(packed, values)):
        return None  # a float64 value float32 would round: sent as it is
    if sys.byteorder != "little":
        packed.byteswap()
    return {FLOAT32: base64.b64encode(packed.tobytes()).decode("ascii")}


def _bad_floats() -> Any:
    raise _unreadable(Message("packed numbers that are not float32"))


def _dataclass(data: dict[str, Any]) -> Any:
    name = data[TYPE]
    cls = known_types().get(name) if isinstance(name, str) else None
    if cls is None:
        raise _unreadable(Message("a value of type {name}, unknown here", name=repr(name)))
    names = {f.name for f in dataclasses.fields(cls)}
    values = {key: decode(item) for key, item in data.items() if key in names}
    try:
        return cls(**values)
    except (TypeError, ValueError, UserError) as exc:  # a field missing, or a value refused (a RunConfig's bounds)
        raise _unreadable(Message("a {name} that cannot be built here: {why}", name=name, why=str(exc))) from None


def _hashable(key: Any) -> Any:
    try:
        hash(key)
    except TypeError:
        raise _unreadable(Message("a mapping key that is not a single value")) from None
    return key


def _unreadable(why: Message) -> ProtocolError:
    return ProtocolError(BAD_REQUEST, Message("the other side sent {what}", what=why))
