"""The signals of a script under `gpu-train-monitor watch --`, as a terminal would have them: the watch takes no
signal the script handles itself, and ends none differently from how it ends bare.

- **SIGINT** (Ctrl+C, the window's Stop) is never taken: Python's own KeyboardInterrupt stops the script where it
  is, without one more optimizer step, or the script's own handler does what the script wants (the run then ends
  as the script does).
- **SIGTERM** (a job scheduler, a window that closes): when the script has no handler of its own, the run is
  ended (`stopped`, with every step it trained, the ones not yet reported too) and the script then dies of SIGTERM
  exactly as it would bare (exit 143). A handler the script installed (a checkpoint on preemption) is left alone.
- **SIGUSR1 / SIGUSR2** carry the window's Clear cache and Pause (gpu_train_monitor.events.signals) only while the
  script has no handler of its own for them: a script that checkpoints on SIGUSR1 keeps doing so, and its run's log
  says which of the window's controls cannot reach it.

A handler is ours only while the script has not replaced it; ours are installed at the first optimizer step, when
the script's own are in place, and given back at the run's end (unless the script replaced them meanwhile).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

from ..events.controls import RunControls
from ..events.signals import CONTROL_SIGNALS, STEERING, Control, apply_control, signal_number


class ScriptSignals:
    """The handlers the watch may put in a script: `install()` returns the window's controls that the script's own
    handlers keep from reaching it, as (control, signal name)."""

    def __init__(self, controls: RunControls, on_terminate: Callable[[int], None]) -> None:
        self.controls = controls
        self.on_terminate = on_terminate
        self._ours: dict[int, tuple[Any, Any]] = {}  # signal -> (our handler, the one it replaced)

    def install(self) -> list[tuple[Control, str]]:
        if threading.current_thread() is not threading.main_thread():
            return []
        kept: list[tuple[Control, str]] = []
        self._take(signal.SIGTERM, self._terminated)
        for control in STEERING:
            number = signal_number(control)
            if number is not None and not self._take(number, self._steer(control)):
                kept.append((control, CONTROL_SIGNALS[control]))
        return kept

    def _take(self, number: int, handler: Any) -> bool:
        """Install `handler` for `number` where the script has none of its own (the default); whether it did."""
        try:
            if signal.getsignal(number) is not signal.SIG_DFL:
                return False
            self._ours[number] = (handler, signal.signal(number, handler))
        except (OSError, ValueError):  # a signal this system will not let us handle
            return False
        return True

    def _steer(self, control: Control) -> Any:
        def on_signal(signum: int, frame: Any) -> None:  # the window's Pause / Resume or Clear cache
            apply_control(self.controls, control)

        return on_signal

    def _terminated(self, signum: int, frame: Any) -> None:
        self.controls.request_stop()  # wakes a paused step, which then lets the run end
        self.on_terminate(signum)

    def uninstall(self) -> None:
        """Give back what ours replaced, where ours are still in place (never a handler the script installed)."""
        if threading.current_thread() is not threading.main_thread():
            return
        ours, self._ours = self._ours, {}
        for number, (handler, previous) in ours.items():
            try:
                if signal.getsignal(number) is handler:
                    signal.signal(number, previous)
            except (OSError, ValueError):
                continue
