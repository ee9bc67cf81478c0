"""Signals reach a recorded run's process only when it can be that run's: on this host, live, and (where the
caller knows) one the caller started. A real child process stands in for rank 0."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from gpu_train_monitor.events.signals import Control
from gpu_train_monitor.gui.launch.signals import CannotSignal, control_signal, send, signal_problem
from gpu_train_monitor.store.run_store import RunRow
from tests.support.run_rows import run_row

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="POSIX signals")

# prints the signals it gets; SIGINT ends it
LISTENER = (
    "import signal, sys, time\n"
    "def seen(n, f):\n"
    "    print(signal.Signals(n).name, flush=True)\n"
    "    if n == signal.SIGINT: sys.exit(0)\n"
    "for s in (signal.SIGINT, signal.SIGUSR1, signal.SIGUSR2): signal.signal(s, seen)\n"
    "print('ready', flush=True)\n"
    "while True: time.sleep(0.05)\n"
)


def row_for(pid: int, **changes) -> RunRow:
    """Run 7 still training in process `pid` on this host."""
    return run_row(
        **{"status": "running", "live": True, "finished_at": None, "steps": 0, "total_steps": 0, "pid": pid, **changes}
    )


@pytest.fixture
def listener():
    child = subprocess.Popen([sys.executable, "-c", LISTENER], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    yield child
    child.kill()
    child.wait()
    child.stdout.close()


def test_each_control_is_its_signal_at_the_recorded_pid(listener):
    row = row_for(listener.pid)
    for control, name in ((Control.PAUSE, "SIGUSR2"), (Control.CLEAR_CACHE, "SIGUSR1"), (Control.STOP, "SIGINT")):
        send(row, control, lambda: {listener.pid})
        assert listener.stdout.readline().strip() == name
    assert listener.wait(10) == 0  # SIGINT stopped it
    assert control_signal(Control.STOP) == signal.SIGINT


@pytest.mark.parametrize(
    "changes, reason",
    [
        ({"host": "another-machine"}, "run 7 trains on another-machine, not on this machine"),
        ({"status": "stopped"}, "run 7 has ended (stopped)"),
        ({"live": False}, "run 7's process {pid} is gone"),
    ],
)
def test_a_run_that_is_not_here_and_live_is_not_signalled(listener, changes, reason):
    row = row_for(listener.pid, **changes)
    assert signal_problem(row) == reason.format(pid=listener.pid)
    with pytest.raises(CannotSignal, match="^cannot stop run 7: "):
        send(row, Control.STOP)
    assert listener.poll() is None  # nothing was sent


def test_a_pid_the_caller_did_not_start_is_not_signalled(listener):
    row = row_for(listener.pid)
    with pytest.raises(CannotSignal) as caught:
        send(row, Control.PAUSE, lambda: {1})
    assert (
        str(caught.value) == f"cannot pause or resume run 7: run 7's process {listener.pid} was not started "
        "by this window"
    )
    assert listener.poll() is None


def test_why_a_signal_was_not_sent_is_a_whole_sentence_through_the_translator(listener, qapp):
    from tests.support.context_marks import marking_translator

    with marking_translator():
        with pytest.raises(CannotSignal) as caught:
            send(row_for(listener.pid, status="stopped"), Control.CLEAR_CACHE)
    assert str(caught.value) == (
        "[run_signals]cannot clear the cache of run 7: [run_signals]run 7 has ended ([status_text]stopped)"
    )  # the status word: the window's one mapping
    assert listener.poll() is None
