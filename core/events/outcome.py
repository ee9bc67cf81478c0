"""How a run ended: the exceptions the loop raises to end it early, and the status each ending reports.

The loop ends a run early by raising (a stop request at a step boundary, a loss that is not finite, out of
memory with no halving left), so every ending leaves through the one `try` in `TrainingSession.run()` and
is finished the same way, outside the `except` block that caught it (its frames would pin the run's tensors).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..base.errors import ConfigError, UserError
from ..base.text import Message, message_of
from .status import Status

# the status words the English texts use ("diverged: the loss became nan ..."), each a template of its own
STATUS_WORDS = {
    Status.COMPLETED: Message("completed"),
    Status.STOPPED: Message("stopped"),
    Status.DIVERGED: Message("diverged"),
    Status.OOM: Message("oom"),
    Status.FAILED: Message("failed"),
    Status.INTERRUPTED: Message("interrupted"),
    Status.RUNNING: Message("running"),
}


def status_word(status: str) -> str:
    """A run's status as the texts for people name it: the status itself, translatable when it is known."""
    return STATUS_WORDS.get(status, status)


class Stopped(Exception):
    """Raised inside the loop when a stop request is seen at a step boundary."""


class Diverged(Exception):
    def __init__(self, step: int, loss: float) -> None:
        super().__init__(
            Message(
                "the loss became {loss} at step {step}; lower the learning rate or use --amp off", loss=loss, step=step
            )
        )


def check_finite(first_step: int, losses: list[float]) -> None:
    """Raise Diverged at the first loss that is not finite (`losses` are steps `first_step` onwards): NaN or
    inf never comes back, so training on would only waste the time left."""
    for offset, value in enumerate(losses):
        if not math.isfinite(value):
            raise Diverged(first_step + offset, value)


class OutOfMemoryStop(Exception):
    """The run ends with status `oom`: the message says what was asked for and what was free."""


@dataclass(frozen=True)
class Outcome:
    """What `RunFinished` says about the ending: its status, message, and whether the user can fix it."""

    status: Status
    message: str = ""
    user_error: bool = False
    error_field: str | None = None  # the config field a ConfigError names, for the window to point at


def trained(step: int, total_steps: int) -> Outcome:
    """The loop returned: `completed` only when every planned step was trained (never report a short run
    as complete)."""
    if step != total_steps:
        return Outcome(
            Status.FAILED,
            Message("the run ended after {step} of {total_steps} planned steps", step=step, total_steps=total_steps),
        )
    return Outcome(Status.COMPLETED)


def ended_by(exc: Exception | SystemExit) -> Outcome:
    """The loop raised `exc`: an early ending above, a user's mistake, or a bug or an environment failure
    (reported as `failed` with its type, never killing the caller). A sys.exit() in the user's model (its
    forward, at a step) would end the process with the run unfinished: it fails the run instead."""
    if isinstance(exc, SystemExit):
        from ..base.user_code import exit_call

        return Outcome(
            Status.FAILED,
            Message("your code called {call}; to end a run with an error, raise an exception", call=exit_call(exc)),
        )
    if isinstance(exc, Stopped):
        return Outcome(Status.STOPPED, Message("stopped by request"))
    if isinstance(exc, Diverged):
        return Outcome(Status.DIVERGED, message_of(exc))
    if isinstance(exc, OutOfMemoryStop):
        return Outcome(Status.OOM, message_of(exc))
    if isinstance(exc, UserError):
        return Outcome(Status.FAILED, message_of(exc), True, exc.field if isinstance(exc, ConfigError) else None)
    return Outcome(Status.FAILED, Message("{kind}: {error}", kind=type(exc).__name__, error=message_of(exc)))
