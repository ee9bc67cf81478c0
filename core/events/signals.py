"""Signals while a command runs: SIGTERM ends a command through its finally blocks; during a run, Ctrl+C
and SIGTERM stop at the next step (as Stop does) and SIGUSR1 / SIGUSR2 clear the cache / pause or resume,
which is how a window steers a run it watches (a data-parallel run's launcher, a terminal run).

`CONTROL_SIGNALS` is that contract, written once: every sender (the window, a comparison's data-parallel
relay) and every receiver (`stop_on_signals`, a rank before its handlers are in place) reads it."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from enum import StrEnum
from typing import Any

from .controls import RunControls


class Control(StrEnum):
    """A command to a run that trains in another process; the signal that carries it is CONTROL_SIGNALS'."""

    STOP = "stop"  # at the next step, as Stop does
    PAUSE = "pause"  # a toggle: pauses a running run, resumes a paused one
    CLEAR_CACHE = "clear_cache"  # empty the CUDA cache (every rank of a data-parallel run)


# by name: Windows has no SIGUSR1 / SIGUSR2 (signal_number says None there)
CONTROL_SIGNALS: dict[Control, str] = {Control.STOP: "SIGINT", Control.PAUSE: "SIGUSR2", Control.CLEAR_CACHE: "SIGUSR1"}
STEERING = (Control.PAUSE, Control.CLEAR_CACHE)  # the controls that must never end a process (their default)
SignalHandler = Callable[[int, Any], None]


def signal_number(control: Control) -> int | None:
    """The signal that carries `control` on this system; None where it has none."""
    number = getattr(signal, CONTROL_SIGNALS[control], None)
    return None if number is None else int(number)


def apply_control(controls: RunControls, control: Control) -> None:
    """What a received control does to the run: the receiving half of the contract."""
    if control is Control.STOP:
        controls.request_stop()
    elif control is Control.PAUSE and controls.pause_requested:
        controls.resume()
    elif control is Control.PAUSE:
        controls.pause()
    else:
        controls.request_cache_clear()


def ignore_control_signals() -> None:
    """The steering controls (clear the cache, pause) must not do their signals' default, end the process,
    before a run's own handlers are in place, after, or in a process that only launches ranks."""
    for control in STEERING:
        number = signal_number(control)
        if number is not None:
            signal.signal(number, signal.SIG_IGN)


def control_handlers(
    handler_for: Callable[[Control], SignalHandler], controls: tuple[Control, ...] = tuple(Control)
) -> dict[int, SignalHandler]:
    """A handler (`handler_for(control)`) for the signal of each of `controls` this system has: every receiver
    listens on CONTROL_SIGNALS' signals alike."""
    handlers: dict[int, SignalHandler] = {}
    for control in controls:
        number = signal_number(control)
        if number is not None:
            handlers[number] = handler_for(control)
    return handlers


@contextlib.contextmanager
def signals_handled(handlers: Mapping[int, SignalHandler], replaced: dict[int, Any] | None = None) -> Iterator[None]:
    """`handlers` (signal number: handler) while the block runs, the handlers they replaced after, whatever
    happens; those are put in `replaced` too, for a handler that hands a repeated signal back to them."""
    previous: dict[int, Any] = {} if replaced is None else replaced
    try:
        for number, handler in handlers.items():
            previous[number] = signal.signal(number, handler)
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that finally blocks run (the finder kills its trial process)."""


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """SIGTERM raises Terminated in the main thread while a command runs; the old handler comes back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigterm(signum: int, frame: Any) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class SignalsSeen:
    terminated = False


@contextlib.contextmanager
def stop_on_signals(
    controls: RunControls, abort_on_repeat: bool = True, announce: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)
) -> Iterator[SignalsSeen]:
    """While a run (or a comparison) trains: the first Ctrl+C or SIGTERM stops it at the next step, as Stop
    does (summary printed, JSON written); a second one aborts. `terminated` says SIGTERM stopped it. The
    steering controls' signals (CONTROL_SIGNALS: clear the cache, pause or resume) are how a window watching
    the recorded pid steers the run. Only the signals in `announce` say on stderr that the run stops (a
    data-parallel run's ranks but rank 0 stay quiet)."""
    seen = SignalsSeen()
    stop = signal_number(Control.STOP)
    assert stop is not None  # SIGINT: every system has it

    def on_stop(signum: int, frame: Any) -> None:
        if abort_on_repeat:  # a rank gets a Ctrl+C twice (the terminal's, then its launcher's): the same stop
            signal.signal(stop, signal.default_int_handler)
        if stop in announce:
            print("\nstopping at the next step (Ctrl+C again to abort)", file=sys.stderr)
        apply_control(controls, Control.STOP)

    def on_sigterm(signum: int, frame: Any) -> None:
        seen.terminated = True
        if abort_on_repeat:
            signal.signal(signal.SIGTERM, previous[signal.SIGTERM])  # a second SIGTERM aborts
        if signal.SIGTERM in announce:
            print("\nterminated: stopping at the next step", file=sys.stderr)
        controls.request_stop()

    def steer(control: Control) -> Any:
        def on_signal(signum: int, frame: Any) -> None:  # the window's Pause / Resume or Clear cache
            apply_control(controls, control)

        return on_signal

    previous: dict[int, Any] = {}
    handlers = {signal.SIGTERM: on_sigterm, stop: on_stop, **control_handlers(steer, STEERING)}
    with signals_handled(handlers, previous):
        yield seen
