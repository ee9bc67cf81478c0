"""The two edges of a traced step: a model built on the meta device becoming fake tensors on the device
predicted for, and a trace that failed said in a sentence for people.
"""

from __future__ import annotations

import torch
from torch import nn

from ..base.errors import UserError
from ..base.text import Message, message_of


def fake_copy(model: nn.Module, device: torch.device) -> nn.Module:
    """`model` (on the meta device) with every parameter and buffer replaced in place by an uninitialised
    tensor on `device` of the same shape, dtype and strides; call under a FakeTensorMode. Tied parameters stay
    tied. A lazy module's uninitialised parameters are left as they are."""
    copies: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}  # id -> (original kept alive: ids stay unique, copy)

    def copy(tensor: torch.Tensor) -> torch.Tensor:
        if id(tensor) not in copies:
            empty = torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype, device=device)
            if isinstance(tensor, nn.Parameter):
                empty = nn.Parameter(empty, tensor.requires_grad)
            copies[id(tensor)] = (tensor, empty)
        return copies[id(tensor)][1]

    for module in model.modules():
        for name, param in list(module._parameters.items()):
            if param is not None and not isinstance(param, nn.parameter.UninitializedParameter):
                module._parameters[name] = copy(param)  # type: ignore[assignment]
        for name, buffer in list(module._buffers.items()):
            if buffer is not None and not isinstance(buffer, nn.parameter.UninitializedBuffer):
                module._buffers[name] = copy(buffer)
    return model


def untraceable(what: str, exc: BaseException) -> Message:
    """Why a step could not be traced on fake tensors, in a sentence for people."""
    from torch._subclasses.fake_tensor import (
        DataDependentOutputException,
        DynamicOutputShapeException,
        UnsupportedOperatorException,
    )

    if isinstance(exc, (DataDependentOutputException, DynamicOutputShapeException)):
        reason = Message("an operation's result depends on the values in the batch ({op})", op=_op_name(exc))
    elif isinstance(exc, UnsupportedOperatorException):
        reason = Message("the operation {op} has no implementation for tensors without memory", op=_op_name(exc))
    elif isinstance(exc, UserError):
        reason = message_of(exc)
    else:
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        reason = Message("{kind}: {error}", kind=type(exc).__name__, error=first)
    return Message(
        "the memory of {what} cannot be predicted without running it: {reason}; real trial steps measure it instead",
        what=what or Message("this training step"),
        reason=reason,
    )


def _op_name(exc: BaseException) -> str:
    func = getattr(exc, "func", None)
    return str(func) if func is not None else type(exc).__name__
