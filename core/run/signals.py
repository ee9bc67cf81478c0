"""Signals while a command runs: SIGTERM ends a command through its finally blocks; during a run, Ctrl+C
and SIGTERM stop at the next step (as Stop does) and SIGUSR1 / SIGUSR2 clear the cache / pause or resume,
which is how a window steers a run it watches (a data-parallel run's launcher, a terminal run)."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any


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
def stop_on_signals(controls: Any, abort_on_repeat: bool = True,
                    announce: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[SignalsSeen]:
    """While a run (or a comparison) trains: the first Ctrl+C or SIGTERM stops it at the next step, as Stop
    does (summary printed, JSON written); a second one aborts. `terminated` says SIGTERM stopped it. SIGUSR1
    clears the cache and SIGUSR2 pauses or resumes: how a window watching the recorded pid steers the run.
    Only the signals in `announce` say on stderr that the run stops (a data-parallel run's ranks but rank 0
    stay quiet)."""
    seen = SignalsSeen()

    def on_sigint(signum: int, frame: Any) -> None:
        if abort_on_repeat:  # a rank gets a Ctrl+C twice (the terminal's, then its launcher's): the same stop
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if signal.SIGINT in announce:
            print("\nstopping at the next step (Ctrl+C again to abort)", file=sys.stderr)
        controls.request_stop()

    def on_sigterm(signum: int, frame: Any) -> None:
        seen.terminated = True
        if abort_on_repeat:
            signal.signal(signal.SIGTERM, previous_term)  # a second SIGTERM aborts
        if signal.SIGTERM in announce:
            print("\nterminated: stopping at the next step", file=sys.stderr)
        controls.request_stop()

    def on_sigusr1(signum: int, frame: Any) -> None:  # the window's Clear cache, for a run it watches
        if hasattr(controls, "request_cache_clear"):
            controls.request_cache_clear()

    def on_sigusr2(signum: int, frame: Any) -> None:  # the window's Pause / Resume, for a run it watches
        if hasattr(controls, "pause"):
            controls.resume() if controls.pause_requested else controls.pause()

    previous_int = signal.signal(signal.SIGINT, on_sigint)
    previous_term = signal.signal(signal.SIGTERM, on_sigterm)
    previous_usr1 = signal.signal(signal.SIGUSR1, on_sigusr1)
    previous_usr2 = signal.signal(signal.SIGUSR2, on_sigusr2)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous_int)
        signal.signal(signal.SIGTERM, previous_term)
        signal.signal(signal.SIGUSR1, previous_usr1)
        signal.signal(signal.SIGUSR2, previous_usr2)
