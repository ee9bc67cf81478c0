"""The control signals' one table: what each control's signal does to a run that receives it, and that a process
ignores the steering ones until its handlers are in place (gpu_train_monitor.events.signals)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

import pytest

from gpu_train_monitor.events.controls import RunControls
from gpu_train_monitor.events.signals import (
    CONTROL_SIGNALS,
    STEERING,
    Control,
    ignore_control_signals,
    signal_number,
    stop_on_signals,
)

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="POSIX signals")


def wait_for(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)  # the handler runs in this (the main) thread between two bytecodes
    return False


def test_the_table_names_the_signals_the_cli_documents() -> None:
    assert {control: signal_number(control) for control in Control} == {
        Control.STOP: signal.SIGINT,
        Control.PAUSE: signal.SIGUSR2,
        Control.CLEAR_CACHE: signal.SIGUSR1,
    }
    assert set(CONTROL_SIGNALS) == set(Control) and Control.STOP not in STEERING


def test_each_control_s_signal_steers_the_run_and_the_handlers_go_afterwards() -> None:
    controls = RunControls()
    before = {number: signal.getsignal(number) for number in map(signal_number, Control)}
    with stop_on_signals(controls, announce=()):
        os.kill(os.getpid(), signal_number(Control.PAUSE))
        assert wait_for(lambda: controls.pause_requested)
        os.kill(os.getpid(), signal_number(Control.PAUSE))  # a toggle: the same signal resumes
        assert wait_for(lambda: not controls.pause_requested)
        os.kill(os.getpid(), signal_number(Control.CLEAR_CACHE))
        assert wait_for(controls.take_cache_clear)
        os.kill(os.getpid(), signal_number(Control.STOP))
        assert wait_for(lambda: controls.stop_requested)
    assert {number: signal.getsignal(number) for number in before} == before


def test_a_process_ignores_the_steering_signals_but_not_the_stop() -> None:
    before = {number: signal.getsignal(number) for number in map(signal_number, Control)}
    try:
        ignore_control_signals()
        assert all(signal.getsignal(signal_number(control)) is signal.SIG_IGN for control in STEERING)
        assert signal.getsignal(signal_number(Control.STOP)) is before[signal.SIGINT]
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
