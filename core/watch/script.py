"""An unchanged script's run: `StepCapture` sees its optimizer steps, and a `Watch` opened at the first of them
records them (the start-up code of `gpu-train-monitor watch --`, core/watch/site/sitecustomize.py, makes one
`ScriptWatch` when the script imports torch and ends it when the script ends).

The Watch opens lazily: a process that never steps an optimizer (a data loader's worker, a launcher such as
torchrun, a script that only evaluates) records nothing. The first process that trains takes the run's uid out
of its environment, so a training process it starts in turn records a run of its own instead of writing into
this one (torchrun's ranks share the uid: the launcher itself never trains). Under torch.distributed only rank 0
records (the Watch's rule). A stop (the window's Stop, Ctrl+C) reaches the script as the KeyboardInterrupt that
Ctrl+C raises, at its next optimizer step. A failure of the watch is one line on stderr; the script goes on
unwatched.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import torch
from torch import nn

from ..base.text import Message, message_of
from ..distributed.env import ENV_RUN_UID
from .placement import unwrapped, warn
from .session import Watch
from .startup import ENV_WATCH_NAME
from .steering import WatchStopped
from .step_capture import StepCapture
from .step_inputs import FirstInputs
from .step_prediction import enabled_here


class ScriptWatch:
    """The watch of this process's script: `install()` at start-up, `finish(error)` at its end."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.pid = os.getpid()  # a process forked from this one (os.fork) neither steps nor ends this run
        self.capture = StepCapture(self._on_step)
        self.inputs = FirstInputs()  # every module's first forward, until the model is known (step_prediction)
        self.watch: Watch | None = None
        self._model: nn.Module | None = None  # the capture's, as the watch was last told
        self._stop: WatchStopped | None = None  # a stop the script caught: its run still ends `stopped`
        self._broken = False

    @classmethod
    def from_environment(cls) -> ScriptWatch:
        return cls(name=os.environ.get(ENV_WATCH_NAME, ""))

    def install(self) -> ScriptWatch:
        self.capture.install()
        if enabled_here():
            self.inputs.follow_all()
        return self

    def _on_step(self, optimizer: torch.optim.Optimizer, loss: torch.Tensor | None, samples: int | None) -> None:
        if self._broken or os.getpid() != self.pid:
            return
        try:
            if self.watch is None:
                self.watch = self._open()
            if self._model is not self.capture.model:  # found at the first step, or a larger optimizer's
                self._model = self.capture.model
                self.watch.set_model(unwrapped(self._model), [optimizer])
        except Exception as exc:  # noqa: BLE001 - the watch must never fail the script
            self._give_up(exc)
            return
        try:
            self.watch.step(loss, samples)
        except WatchStopped as stop:
            self._stop = stop
            # a plain KeyboardInterrupt, as Ctrl+C raises: Python ends a script it escapes from by SIGINT (exit
            # 130 in a shell) only for that very class, and the script's traceback names what it knows
            raise KeyboardInterrupt(*stop.args) from None

    def _open(self) -> Watch:
        watch = Watch(name=self.name, source="script", signals=True, raise_on_stop=True, config=script_config())
        watch.prediction.use(self.inputs)
        os.environ.pop(ENV_RUN_UID, None)  # this process's run: a training process it starts records its own
        self._model = self.capture.model
        watch.set_model(unwrapped(self._model), [self.capture.leader] if self.capture.leader is not None else [])
        return watch.start()

    def finish(self, error: BaseException | None = None) -> str | None:
        """End the run (idempotent): the script's uncaught exception, else how it ended; None if it never
        trained. A stop the script caught and then exited normally from still ends the run `stopped`."""
        self.inputs.forget()
        if self.watch is None or os.getpid() != self.pid:
            return None
        return self.watch.finish(error if error is not None else self._stop)

    def _give_up(self, exc: BaseException) -> None:
        self._broken = True
        warn(Message("watching stopped: {kind}: {error}", kind=type(exc).__name__, error=message_of(exc)))


def script_config() -> dict[str, Any]:
    """What was run, for the run's config: the script's path (or module) and its arguments."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    config: dict[str, Any] = {"script": os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""}
    if spec is not None and getattr(spec, "name", None):  # python -m package.module
        config["module"] = spec.name
    config["argv"] = list(sys.argv[1:])
    return config
