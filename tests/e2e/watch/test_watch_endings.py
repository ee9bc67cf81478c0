"""How a script under `watch --` ends, as a terminal would have it: a script that fails before its first step says
its own error (the terminal's and the window's last line), SIGTERM ends it as SIGTERM ends it bare with every step
it trained, Ctrl+C trains no step more, and a script's own signal handlers (checkpoint on SIGTERM, on SIGUSR1) are
kept and called."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.support.processes import WAIT_S
from tests.support.watched_loops import WatchedScript, run_watched, watched

BEFORE_THE_FIRST_STEP = {
    "syntax": ("import torch\nmodel = torch.nn.Linear(2, (\n", "SyntaxError: '(' was never closed (train.py, line 2)"),
    "raised": (
        "import torch\n\ndef load():\n    raise ValueError('no data in ./data')\n\nload()\n",
        "ValueError: no data in ./data (train.py, line 4)",
    ),
}


@pytest.mark.parametrize("script, error", BEFORE_THE_FIRST_STEP.values(), ids=BEFORE_THE_FIRST_STEP.keys())
def test_a_script_that_fails_before_its_first_step_says_its_own_error_last(
    tmp_path: Path, script: str, error: str
) -> None:
    result = run_watched(tmp_path, script)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert "Traceback" in result.stderr or "SyntaxError" in lines[-2]  # the script's own traceback, untouched
    assert lines[-1] == (
        "gpu-train-monitor: error: the script failed before its first optimizer step, nothing recorded: " + error
    )


def test_a_script_that_exits_non_zero_before_its_first_step_says_its_code(tmp_path: Path) -> None:
    result = run_watched(tmp_path, "import sys, torch\nsys.exit(4)\n")
    assert result.returncode == 4
    assert result.stderr.splitlines()[-1] == (
        "gpu-train-monitor: error: the script exited with code 4 before its first optimizer step: nothing recorded"
    )


def started(folder: Path, script: str) -> subprocess.Popen[str]:
    (folder / "train.py").write_text(script)
    return watched(folder, folder / "runs.db", "python", "train.py")


def wait_for(process: subprocess.Popen[str], line: str) -> list[str]:
    """stdout lines up to the first that is `line` (fails at EOF)."""
    assert process.stdout is not None
    lines = []
    while True:
        read = process.stdout.readline()
        assert read, f"exited before {line!r}: {lines}"
        lines.append(read.rstrip("\n"))
        if lines[-1] == line:
            return lines


@contextlib.contextmanager
def ended(process: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    """The watch and its script, killed after the test whatever it did."""
    try:
        yield process
    finally:
        if process.poll() is None:
            for child in psutil.Process(process.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    child.kill()
            process.kill()
        process.communicate()


def recorded(folder: Path) -> WatchedScript:
    return WatchedScript(0, "", "", folder / "runs.db")


THEN_IDLE = """
import os, sys, time, torch
print("pid", os.getpid(), flush=True)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    model(torch.randn(5, 4)).pow(2).mean().backward()
    optimizer.step()
    optimizer.zero_grad()
print("trained", flush=True)
time.sleep(60)  # an evaluation, an upload: no more steps
"""


def test_sigterm_after_the_last_report_ends_the_script_as_bare_with_every_step(tmp_path: Path) -> None:
    with ended(started(tmp_path, THEN_IDLE)) as process:
        wait_for(process, "trained")
        process.send_signal(signal.SIGTERM)  # to the watch, as a job scheduler sends it: it reaches the script
        _, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 128 + signal.SIGTERM, stderr  # as the script bare: killed by SIGTERM
    run, losses, _ = recorded(tmp_path).run()
    assert (run.status, run.steps, len(losses)) == ("stopped", 3, 3)  # the steps no report had carried yet
    assert run.message == "ended by SIGTERM"


CTRL_C = """
import os, signal, sys, time, torch

class Slow(torch.nn.Linear):
    def forward(self, x):
        print("forward", flush=True)
        time.sleep(0.5)
        return super().forward(x)

print("pid", os.getpid(), flush=True)
model = Slow(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer.register_step_post_hook(lambda *args: print("updated", flush=True))
stop = []
if "--own-handler" in sys.argv:
    signal.signal(signal.SIGINT, lambda *args: stop.append(True))  # finish the step, save, leave
for step in range(100):
    model(torch.randn(5, 4)).pow(2).mean().backward()
    optimizer.step()
    optimizer.zero_grad()
    if stop:
        print("saved", flush=True)
        break
"""


def test_ctrl_c_stops_the_script_where_it_is_without_training_one_step_more(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(CTRL_C)
    with ended(watched(tmp_path, tmp_path / "runs.db", "python", "train.py")) as process:
        lines = wait_for(process, "updated")
        pid = int(lines[0].split()[1])
        wait_for(process, "updated")
        wait_for(process, "forward")  # the third step's forward has begun
        os.kill(pid, signal.SIGINT)  # what a terminal's Ctrl+C (or the window's Stop) sends the script
        stdout, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 130, stderr
    assert "updated" not in stdout  # no third update
    run, _, _ = recorded(tmp_path).run()
    assert (run.status, run.steps) == ("stopped", 2)


def test_a_scripts_own_sigint_handler_is_kept(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(CTRL_C)
    with ended(watched(tmp_path, tmp_path / "runs.db", "python", "train.py", "--own-handler")) as process:
        pid = int(wait_for(process, "updated")[0].split()[1])
        wait_for(process, "updated")  # the run recorded since its first step: the watch is in place
        os.kill(pid, signal.SIGINT)
        stdout, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 0, stderr
    assert stdout.splitlines()[-1] == "saved"  # its handler ran, and it left as it chose to
    run, _, _ = recorded(tmp_path).run()
    assert run.status == "completed" and run.steps >= 1


CHECKPOINTS = """
import os, signal, sys, time, torch
print("pid", os.getpid(), flush=True)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

def checkpoint(signum, frame):  # preemption on a cluster: save, and on SIGTERM leave
    torch.save(model.state_dict(), f"{signal.Signals(signum).name}.pt")
    print("checkpoint", signal.Signals(signum).name, flush=True)
    if signum == signal.SIGTERM:
        sys.exit(0)

signal.signal(signal.SIGTERM, checkpoint)
signal.signal(signal.SIGUSR1, checkpoint)
for step in range(3000):
    model(torch.randn(5, 4)).pow(2).mean().backward()
    optimizer.step()
    optimizer.zero_grad()
    if step == 1:
        print("stepping", flush=True)
    time.sleep(0.01)
"""


def test_a_script_that_checkpoints_on_sigterm_and_sigusr1_keeps_its_handlers(tmp_path: Path) -> None:
    with ended(started(tmp_path, CHECKPOINTS)) as process:
        pid = int(wait_for(process, "stepping")[0].split()[1])
        os.kill(pid, signal.SIGUSR1)  # the cluster's warning, or the window's Clear cache: the script's to handle
        wait_for(process, "checkpoint SIGUSR1")
        process.send_signal(signal.SIGTERM)  # to the watch, which forwards it
        stdout, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 0, stderr
    assert stdout.splitlines()[-1] == "checkpoint SIGTERM"
    assert (tmp_path / "SIGUSR1.pt").is_file() and (tmp_path / "SIGTERM.pt").is_file()
    result = recorded(tmp_path)
    run, _, _ = result.run()
    assert run.status == "completed" and run.steps >= 2
    said = [event.data["text"] for event in result.events() if event.kind == "LogMessage"]
    assert "the script handles SIGUSR1 itself: the window's Clear cache does not reach it" in said


OUT_OF_MEMORY_AT_STEP_6 = """import torch
model = torch.nn.Sequential(torch.nn.Linear(12, 64), torch.nn.ReLU(), torch.nn.Linear(64, 3))
optimizer = torch.optim.AdamW(model.parameters())
for step in range(1, 20):
    x, y = torch.randn(16, 12), torch.randint(0, 3, (16,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    if step == 6:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB.")
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
"""


def test_a_script_that_runs_out_of_memory_records_what_held_it_and_the_batch_that_fits(tmp_path: Path) -> None:
    result = run_watched(tmp_path, OUT_OF_MEMORY_AT_STEP_6)
    assert result.returncode == 1 and "torch.OutOfMemoryError: CUDA out of memory" in result.stderr
    run, losses, _ = result.run()
    assert run.status == "oom" and len(losses) == 5
    (oom,) = [event.data for event in result.events() if event.kind == "OutOfMemory"]
    assert (oom["step"], oom["batch_size"], oom["requested_bytes"]) == (6, 16, 2 * 2**30)
    # no step was split by module yet (one a minute after the first sampled one): the step as predicted names them
    assert (oom["holders_source"], oom["holders_step"]) == ("predicted", 16)
    assert [row["name"] for row in oom["holders"]] == ["0", "1", "2"]  # the first Linear: weights and AdamW's moments
    assert sum(h["activations_bytes"] + h["params_bytes"] for h in oom["holders"]) <= oom["holders_total_bytes"]
    assert isinstance(oom["fits_batch"], int) and 0 <= oom["fits_batch"] < 16
