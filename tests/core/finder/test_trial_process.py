"""The CPU trial's child process as the search handles it: Stop ends a trial at once, and a child that dies says
why. The children here are small Python scripts standing in for `gpu_train_monitor.finder.trial` (no torch: they
start in a fraction of a second); tests/e2e/test_finder_trials.py does the same with real trials.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

import gpu_train_monitor.finder.warm
from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.finder.search import find_batch_size
from gpu_train_monitor.finder.warm import WarmTrials, measure_in_subprocess
from tests.support.predictions import ModelPredictions

CONFIG = RunConfig(device="cpu", model="tiny-cnn")
STOP_WITHIN_S = 2.0

# Answers the warm child's idle request as the real one does; a trial request (the first line of a fresh child,
# any other of a warm one) writes the child's pid to PIDFILE and hangs there, deaf to SIGTERM, as a trial deep in a
# C kernel is: only SIGKILL ends it.
HANGING_TRIAL = """
import json, os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
for line in sys.stdin:
    request = json.loads(line)
    if request.get("serve"):
        continue
    if "idle" in request:
        print("trial answer: " + json.dumps({"rss_bytes": 1000, "resettable": True}), flush=True)
        continue
    with open(PIDFILE, "w") as out:
        out.write(str(os.getpid()))
    time.sleep(30)
"""


def fake_child(monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    """Every trial process the finder starts runs `code` instead of gpu_train_monitor.finder.trial."""
    monkeypatch.setattr(gpu_train_monitor.finder.warm, "trial_command", lambda *limit: [sys.executable, "-c", code])


def hanging_trial(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    pidfile = tmp_path / "trial.pid"
    fake_child(monkeypatch, f"PIDFILE = {str(pidfile)!r}\n{HANGING_TRIAL}")
    return pidfile


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def stop_mid_trial(pidfile: Path, search) -> tuple[BaseException | None, float, int]:
    """Run `search(should_stop)` in a thread, press Stop once its trial process is running: (what the search
    raised, seconds from Stop to the search's return, the trial process's pid)."""
    stop, raised = threading.Event(), []
    ended = threading.Event()

    def run() -> None:
        try:
            search(stop.is_set)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            raised.append(exc)
        ended.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)
    pid = int(pidfile.read_text())
    stop.set()
    pressed = time.monotonic()
    ended.wait(30)
    took = time.monotonic() - pressed
    return (raised[0] if raised else None), took, pid


@pytest.mark.parametrize("predict", [ModelPredictions(), None], ids=["warm process", "fresh process per trial"])
def test_stop_ends_a_running_trial_at_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, predict) -> None:
    """The window's Stop asked between trials only: a trial at a large batch ran on for over 40 s."""
    pidfile = hanging_trial(monkeypatch, tmp_path)

    def search(should_stop) -> None:
        find_batch_size(CONFIG, capacity=10**9, start=2, predict=predict, should_stop=should_stop)

    raised, took, pid = stop_mid_trial(pidfile, search)
    assert took < STOP_WITHIN_S, f"the search returned {took:.1f} s after Stop"
    assert isinstance(raised, UserError) and str(raised) == "the batch-size search was stopped"
    assert gone(pid)  # SIGKILL after the grace: it ignored SIGTERM


def test_a_warm_trial_process_is_ended_at_once_when_stopped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pidfile = hanging_trial(monkeypatch, tmp_path)

    def search(should_stop) -> None:
        with WarmTrials(should_stop) as warm:
            warm.idle_bytes(CONFIG)
            warm.measure(CONFIG, 64, 2)

    raised, took, pid = stop_mid_trial(pidfile, search)
    assert took < STOP_WITHIN_S and isinstance(raised, UserError) and "stopped" in str(raised)
    assert gone(pid)


DIES_BY_SIGNAL = "import os, signal, sys\nsys.stdin.readline()\nos.kill(os.getpid(), signal.{signal})\n"
DIES_SAYING = (
    "import sys\nsys.stdin.readline()\nprint('loading the model', file=sys.stderr)\n{last}\nsys.exit({code})\n"
)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (DIES_BY_SIGNAL.format(signal="SIGSEGV"), "the batch-size trial at 8 failed: was killed by SIGSEGV"),
        (DIES_BY_SIGNAL.format(signal="SIGTERM"), "the batch-size trial at 8 failed: was killed by SIGTERM"),
        (
            DIES_SAYING.format(last="", code=1),
            "the batch-size trial at 8 failed: exited with code 1; loading the model",
        ),
        (
            DIES_SAYING.format(last="print('RuntimeError: boom', file=sys.stderr)", code=5),
            "the batch-size trial at 8 failed: exited with code 5; RuntimeError: boom",
        ),
        ("import sys\nsys.stdin.readline()\n", "the batch-size trial at 8 failed: exited with code 0"),
    ],
    ids=["SIGSEGV", "SIGTERM", "exit 1", "exit 5 with an error line", "no answer"],
)
@pytest.mark.parametrize("warm", [True, False], ids=["warm", "fresh"])
def test_a_trial_that_dies_says_how(monkeypatch: pytest.MonkeyPatch, code: str, expected: str, warm: bool) -> None:
    """It said "no message" where the child wrote nothing on stderr."""
    if warm:  # the warm child reads the serve line first: one line more
        code = code.replace("sys.stdin.readline()", "sys.stdin.readline(); sys.stdin.readline()", 1)
    fake_child(monkeypatch, code)
    with pytest.raises(UserError) as raised:
        if warm:
            with WarmTrials() as trials:
                trials.measure(CONFIG, 8, 2)
        else:
            measure_in_subprocess(CONFIG, 8, 2)
    assert str(raised.value) == expected
    assert "no message" not in str(raised.value)


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "fresh"])
def test_a_trial_killed_by_sigkill_ran_out_of_memory(monkeypatch: pytest.MonkeyPatch, warm: bool) -> None:
    """SIGKILL is the kernel's out-of-memory killer's signal: that batch is too big, and the search goes on."""
    reads = "sys.stdin.readline(); sys.stdin.readline()" if warm else "sys.stdin.readline()"
    fake_child(monkeypatch, f"import os, signal, sys\n{reads}\nos.kill(os.getpid(), signal.SIGKILL)\n")
    if warm:
        with WarmTrials() as trials:
            assert trials.measure(CONFIG, 8, 2) is None
    else:
        assert measure_in_subprocess(CONFIG, 8, 2) is None
