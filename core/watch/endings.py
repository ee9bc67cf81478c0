"""How a watched run ended, from what ended it: leaving the block, an exception, out of memory, Ctrl+C or the
window's Stop (a KeyboardInterrupt), or an exit."""

from __future__ import annotations

import signal

from ..base.text import Message, message_of
from ..engine.loop_state import LoopState
from ..events.events import OutOfMemory
from ..events.status import Status
from ..memory import oom, oom_autopsy
from ..memory.probe import MemoryProbe


class ScriptExited(SystemExit):
    """A script under `watch --` exited with a non-zero code (`sys.exit(3)`, `os._exit(3)`): its run fails in the
    words `watch` uses for it (gpu_train_monitor.cli.watched_script.SCRIPT_EXITED), which `watch --remote` exits by."""


class EndedBySignal(BaseException):
    """A signal the script had no handler for (SIGTERM) ends it: its run is `stopped`, the process then dies of it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return str(self.signum)


def ending(error: BaseException | None) -> tuple[Status, str]:
    """The status and message of a watched run that `error` ended (None: it left its block normally)."""
    if error is None:
        return Status.COMPLETED, ""
    if isinstance(error, EndedBySignal):
        return Status.STOPPED, Message("ended by {signal}", signal=error.name)
    if isinstance(error, ScriptExited):
        return Status.FAILED, Message("the script exited with code {code}", code=error.code)
    if isinstance(error, KeyboardInterrupt):
        return Status.STOPPED, Message("stopped by request")
    if oom.is_out_of_memory(error):
        return Status.OOM, Message("{kind}: {error}", kind=type(error).__name__, error=message_of(error))
    if isinstance(error, SystemExit) and error.code in (None, 0):
        return Status.COMPLETED, ""
    if isinstance(error, SystemExit):
        return Status.FAILED, Message("the program exited with code {code}", code=error.code)
    return Status.FAILED, Message("{kind}: {error}", kind=type(error).__name__, error=message_of(error))


def oom_event(error: BaseException, loop: LoopState, batch_size: int, probe: MemoryProbe) -> OutOfMemory:
    """The out of memory that ended a watched run at the step after `loop.step`: what was asked for, what was free,
    what held the memory by module (the loop's latest split, else its step as predicted: `loop.predicted`), and the
    batch that prediction says would fit."""
    step, sample = loop.step + 1, probe.sample()
    measured = loop.attributed
    rows, at = (measured.modules, measured.step) if measured is not None else ((), 0)
    autopsy = oom_autopsy.autopsy(rows, at, loop.predicted or None, batch_size, probe.usable_capacity())
    where = oom.where_in_training(step)
    return oom.event(str(error), where, step, batch_size, False, sample, probe.free_bytes(), "train", autopsy=autopsy)
