"""An unchanged script's run: `StepCapture` sees its optimizer steps, and a `Watch` opened at the first of them
records them (the start-up code of `gpu-train-monitor watch --`, core/watch/site/sitecustomize.py, makes one
`ScriptWatch` when the script imports torch and ends it when the script ends).

The Watch opens lazily: a process that never steps an optimizer (a data loader's worker, a launcher such as
torchrun, a script that only evaluates) records nothing. The first process that trains takes the run's uid out
of its environment, so a training process it starts in turn records a run of its own instead of writing into
this one (torchrun's ranks share the uid: the launcher itself never trains). Under torch.distributed only rank 0
records (the Watch's rule).

It ends as a terminal would have it (gpu_train_monitor.watch.script_signals): Ctrl+C and the window's Stop are the
script's own KeyboardInterrupt, where the script is; SIGTERM, unless the script handles it, ends the run with every
step trained and the script as bare; the script's own handlers are kept. Its exit code is its run's ending
(gpu_train_monitor.watch.script_exits). A stop asked for in this process (`controls.request_stop()`) reaches the
script as the KeyboardInterrupt Ctrl+C raises, at its next step. A failure of the watch is one line on stderr; the
script goes on unwatched.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any

import torch
from torch import nn

from ..base.text import Message, message_of
from ..distributed.env import ENV_RUN_UID
from ..engine.step_phases import PhaseTimer
from ..events.signals import Control
from .endings import EndedBySignal, ScriptExited
from .placement import device_of, unwrapped_model, warn
from .script_exits import ScriptExits, die_of
from .script_signals import ScriptSignals
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
        self.exits = ScriptExits(self._exits_now)
        self.signals: ScriptSignals | None = None
        self.watch: Watch | None = None
        self._model: nn.Module | None = None  # the capture's, as the watch was last told
        self._stop: WatchStopped | None = None  # a stop the script caught: its run still ends `stopped`
        self._broken = False
        self._busy = 0  # inside the watch's code: a signal that ends the run waits for it to return
        self._signal: int | None = None  # such a signal, waiting

    @classmethod
    def from_environment(cls) -> ScriptWatch:
        return cls(name=os.environ.get(ENV_WATCH_NAME, ""))

    def install(self) -> ScriptWatch:
        self.capture.install()
        self.exits.install()
        if enabled_here():
            self.inputs.follow_all()
        return self

    def uninstall(self) -> None:
        """Take out what install() put in (a test's process goes on)."""
        self.capture.uninstall()
        self.exits.uninstall()

    def _on_step(self, optimizer: torch.optim.Optimizer | None, loss: torch.Tensor | None, samples: int | None) -> None:
        if self._broken or os.getpid() != self.pid:
            return
        self._busy += 1
        try:
            self._step(optimizer, loss, samples)
        finally:
            self._busy -= 1
            self.exits.code = None  # it trains on: a SystemExit it caught does not end its run
            if self._signal is not None and not self._busy:
                self._terminate(self._signal)

    def _step(self, optimizer: torch.optim.Optimizer | None, loss: torch.Tensor | None, samples: int | None) -> None:
        try:
            if self.watch is None:
                self.watch = self._open()
            if self._model is not self.capture.model:  # found at the first step, or a larger optimizer's
                self._model = self.capture.model
                self.watch.set_model(unwrapped_model(self._model), [optimizer] if optimizer is not None else [])
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
        config = script_config()
        layout = self.capture.layout
        config["counted"] = layout.unit  # what a step's samples are: samples, or a language model's tokens
        if layout.sequence:
            config["seq_len"] = layout.sequence
        if self.capture.by_backward:
            config["steps"] = "backward"  # no optimizer: each backward() is a step
        # no signal handlers of the Watch's own: the script's signals are handled as a terminal has them (below)
        watch = Watch(name=self.name, source="script", signals=False, raise_on_stop=True, config=config)
        watch.prediction.use(self.inputs)
        watch.timer = PhaseTimer()  # the capture's hooks mark where each step's time goes
        self.capture.time_phases(watch.timer)
        watch.timer.start()  # the next step's: this one's forward came before the model was known
        os.environ.pop(ENV_RUN_UID, None)  # this process's run: a training process it starts records its own
        self._model = self.capture.model
        watch.set_model(unwrapped_model(self._model), [self.capture.leader] if self.capture.leader is not None else [])
        watch.start()
        watch.timer.on_device(device_of(watch.model, watch.optimizers))  # a GPU's own clock too (CUDA events)
        if self.capture.by_backward:
            watch.log(
                "info",
                Message(
                    "no optimizer steps in this script (weights updated by hand): each backward() is recorded as a step"
                ),
            )
        self.signals = ScriptSignals(watch.controls, self._terminate)
        for control, name in self.signals.install():
            watch.log("info", _handled_by_the_script(control, name))
        return watch

    def finish(self, error: BaseException | None = None) -> str | None:
        """End the run (idempotent): the script's uncaught exception, else how it ended (a non-zero sys.exit() is
        `failed`); None if it never trained. A stop the script caught and then exited normally from still ends the
        run `stopped`."""
        self.inputs.forget()
        if os.getpid() != self.pid:
            return None
        self._busy += 1
        try:
            with contextlib.suppress(KeyboardInterrupt):  # a stop at that step: the run ends all the same
                self.capture.release()
            if self.watch is None:
                return None
            if error is None:
                error = self._stop if self._stop is not None else _exited(self.exits.code)
            return self.watch.finish(error)
        finally:
            self._busy -= 1
            if self.signals is not None:
                self.signals.uninstall()
            if self._signal is not None and not self._busy:
                self._terminate(self._signal)

    def _terminate(self, signum: int) -> None:
        """A signal the script has no handler for ends it (SIGTERM): the run ends with every step trained, then the
        process dies of the signal as it would bare. Inside the watch's own code it waits for that to return."""
        if self._busy:
            self._signal = signum
            return
        self._signal = None
        if threading.current_thread() is not threading.main_thread():  # a training thread: only the main one
            os.kill(os.getpid(), signum)  # can die of it, through our handler again
            return
        try:
            self.finish(EndedBySignal(signum))
        finally:
            die_of(signum)

    def _exits_now(self, code: int) -> None:
        """os._exit(code): no exit handler will run, so the run ends here, with the steps not yet reported."""
        self.finish(_exited(code) if code else None)

    def _give_up(self, exc: BaseException) -> None:
        self._broken = True
        warn(Message("watching stopped: {kind}: {error}", kind=type(exc).__name__, error=message_of(exc)))


def _exited(code: int | None) -> ScriptExited | None:
    return ScriptExited(code) if code else None


def _handled_by_the_script(control: Control, name: str) -> str:
    if control is Control.PAUSE:
        return Message("the script handles {signal} itself: the window's Pause and Resume do not reach it", signal=name)
    return Message("the script handles {signal} itself: the window's Clear cache does not reach it", signal=name)


def script_config() -> dict[str, Any]:
    """What was run, for the run's config: the script's path (or module) and its arguments."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    config: dict[str, Any] = {"script": os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""}
    if spec is not None and getattr(spec, "name", None):  # python -m package.module
        config["module"] = spec.name
    config["argv"] = list(sys.argv[1:])
    return config
