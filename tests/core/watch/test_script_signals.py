"""The handlers a script under `watch --` gets from the watch: never SIGINT, SIGTERM and the window's steering
signals only where the script has none of its own, and given back at the end unless the script replaced them."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from gpu_train_monitor.events.controls import RunControls
from gpu_train_monitor.events.signals import Control
from gpu_train_monitor.watch.script_signals import ScriptSignals

NUMBERS = (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1, signal.SIGUSR2)


@pytest.fixture(autouse=True)
def handlers_given_back() -> Iterator[None]:
    before = {number: signal.getsignal(number) for number in NUMBERS}
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def test_only_signals_the_script_leaves_alone_are_taken_and_ctrl_c_never() -> None:
    theirs = []
    signal.signal(signal.SIGUSR1, signal.SIG_DFL)
    signal.signal(signal.SIGUSR2, lambda *args: theirs.append("usr2"))  # the script's own
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sigint = signal.getsignal(signal.SIGINT)
    controls, terminated = RunControls(), []
    signals = ScriptSignals(controls, terminated.append)
    assert signals.install() == [(Control.PAUSE, "SIGUSR2")]  # the window's Pause cannot reach this script
    assert signal.getsignal(signal.SIGINT) is sigint
    os.kill(os.getpid(), signal.SIGUSR1)  # the window's Clear cache
    os.kill(os.getpid(), signal.SIGUSR2)  # the script's
    os.kill(os.getpid(), signal.SIGTERM)
    assert controls.take_cache_clear() and theirs == ["usr2"] and not controls.pause_requested
    assert terminated == [signal.SIGTERM] and controls.stop_requested
    signals.uninstall()
    assert signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_handler_the_script_installs_later_is_kept_at_the_end() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signals = ScriptSignals(RunControls(), lambda signum: None)
    signals.install()

    def later(signum: int, frame: object) -> None:
        pass

    signal.signal(signal.SIGTERM, later)
    signals.uninstall()
    assert signal.getsignal(signal.SIGTERM) is later
