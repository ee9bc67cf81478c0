"""A child's family is every descendant seen, even one that left the child's session, and killing it leaves
none of them running. Real processes: a child whose own child starts a session of its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from gpu_train_monitor.gui.launch.process_family import ProcessFamily, alive, signal_group

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="POSIX process groups")

# starts a grandchild in a session of its own (as the elastic launcher may start a rank), prints its pid, waits
PARENT = (
    "import subprocess, sys, time\n"
    "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n"
    "print(g.pid, flush=True)\n"
    "time.sleep(60)\n"
)


@pytest.fixture
def child():
    process = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    grandchild = int(process.stdout.readline())
    yield process, grandchild
    for pid in (grandchild, process.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait()
    process.stdout.close()


def test_the_family_holds_a_descendant_in_a_session_of_its_own_and_kill_leaves_none(child):
    process, grandchild = child
    family = ProcessFamily()
    family.collect(process.pid)
    assert family.alive_pids() == {process.pid, grandchild}
    assert os.getsid(grandchild) != os.getsid(process.pid)  # out of the child's group: killpg alone misses it
    assert family.kill(process.pid) == 1  # the grandchild; the child is killed through its group
    assert process.wait(10) == -signal.SIGKILL
    assert not any(alive(p) for p in family.processes())
    assert {p.pid for p in family.processes()} == {process.pid, grandchild}  # still listed once dead


def test_a_group_that_is_gone_is_left_alone():
    done = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    done.wait()
    with pytest.raises(ProcessLookupError):
        os.killpg(done.pid, signal.SIGTERM)
    signal_group(done.pid, signal.SIGTERM)  # the same, quietly: nothing is left to stop
