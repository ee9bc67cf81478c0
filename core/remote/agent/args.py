"""Reading a request's arguments, and the uid a new run or job takes: what every agent op shares."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from ...base.errors import UserError
from ...base.text import Message
from ..wire.protocol import BAD_REQUEST, ProtocolError
from .spawn import check_uid

if TYPE_CHECKING:
    from .server import Agent


def argument(request: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
    """Request argument `name` of type `kind` (no bools for int); ProtocolError(bad_request) otherwise."""
    if name not in request or (request[name] is None and default is not ...):
        if default is ...:
            raise ProtocolError(BAD_REQUEST, Message("argument {name} is missing", name=name))
        return default
    value = request[name]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _kinds(kind)):
        raise ProtocolError(BAD_REQUEST, Message("argument {name} has the wrong type", name=name))
    return value


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def new_uid(agent: Agent, request: dict[str, Any]) -> str:
    """The uid a new run takes: the request's (a file name, not recorded in the store yet) or a fresh one."""
    uid = check_uid(argument(request, "uid", str, "") or uuid.uuid4().hex)
    if agent.store.find_uid(uid) is not None:
        raise UserError(Message("a run with uid {uid} is recorded already on {host}", uid=uid, host=agent.host))
    return uid
