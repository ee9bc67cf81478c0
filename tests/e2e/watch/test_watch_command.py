"""`gpu-train-monitor watch -- python train.py` on scripts that know nothing of us: the optimizer steps and the
accumulated losses the script printed are in the store, its output and exit code pass through, its own `core` and
`gui` packages are the ones it imports, and every ending (exit code, kill -9, Ctrl+C) is the run's status."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpu_train_monitor.store.run_store import RunStore, StoreError
from tests.support.processes import ENV, WAIT_S

# Gradient accumulation as people write it: 4 micro-batches per optimizer step, each loss divided by 4.
TRAIN = """\
import argparse, os, sys, time
import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=3)
parser.add_argument("--sleep", type=float, default=0.0)
parser.add_argument("--exit", type=int, default=0)
args = parser.parse_args()
print("pid", os.getpid(), flush=True)
print("to stderr, untouched", file=sys.stderr, flush=True)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(args.steps):
    total = 0.0
    for micro in range(4):
        x, y = torch.randn(3, 4), torch.randn(3, 1)
        loss = nn.functional.mse_loss(model(x), y) / 4
        loss.backward()
        total += loss.item()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step + 1} loss {total!r}", flush=True)
    time.sleep(args.sleep)
sys.exit(args.exit)
"""


def watch(
    folder: Path, db: Path, *command: str, uid: str | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """`python -P -m gpu_train_monitor watch` in `folder` (-P: the folder's own `core` must not shadow ours, as the
    window starts it), with `uid` handed to it as a window hands its own."""
    env = {name: value for name, value in (env or ENV).items() if name != "GPU_TRAIN_MONITOR_RUN_UID"}
    if uid:
        env["GPU_TRAIN_MONITOR_RUN_UID"] = uid
    args = [
        sys.executable,
        "-P",
        "-m",
        "gpu_train_monitor",
        "watch",
        "--runs-db",
        str(db),
        "--name",
        "watched",
        "--",
        *command,
    ]
    return subprocess.Popen(args, cwd=folder, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def printed_losses(stdout: str) -> list[float]:
    return [float(value) for value in re.findall(r"^step \d+ loss (\S+)$", stdout, re.MULTILINE)]


def the_run(db: Path):
    with RunStore(db) as store:
        (run,) = store.list_runs()
        return run, store.steps(run.id).losses, store.config(run.id)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A research folder with packages named as ours, and the training script."""
    folder = tmp_path / "research"
    for package in ("core", "gui"):
        (folder / package).mkdir(parents=True)
        (folder / package / "__init__.py").write_text(f"WHOSE = 'the project {package}'\n")
    (folder / "train.py").write_text(TRAIN)
    return folder


def test_accumulated_losses_are_recorded_and_the_output_passes_through(project: Path, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    process = watch(project, db, "python", "train.py", "--steps", "4")
    stdout, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 0, stderr
    assert stderr == "to stderr, untouched\n"  # nothing of ours when all went well
    assert re.fullmatch(r"pid \d+\n(step \d loss \S+\n){4}", stdout)
    run, losses, config = the_run(db)
    assert (run.status, run.steps, run.name, run.dataset) == ("completed", 4, "watched", "script")
    assert losses == pytest.approx(printed_losses(stdout), rel=1e-6)  # each the mean of its 4 micro-batch losses
    assert config["script"] == str(project / "train.py") and config["argv"] == ["--steps", "4"]
    assert config["model"] == "Sequential" and config["optimizer"] == "SGD"


def test_the_scripts_own_core_and_gui_are_the_ones_it_imports(project: Path, tmp_path: Path) -> None:
    (project / "core" / "layers.py").write_text("SIZE = 4\n")  # a module ours does not have
    (project / "gpu_train_monitor").mkdir()  # even one named as our own import name does not shadow ours
    (project / "gpu_train_monitor" / "__init__.py").write_text("raise ImportError('the project one')\n")
    (project / "own.py").write_text(
        "import core, core.layers, gui\nprint(core.WHOSE, gui.WHOSE, core.layers.SIZE)\n"
        "import sys; sys.argv[1:] = ['--steps', '2']\nexec(open('train.py').read())\n"
    )
    db = tmp_path / "runs.db"
    process = watch(project, db, "python", "own.py")
    stdout, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 0, stderr
    assert stdout.splitlines()[0] == "the project core the project gui 4"
    run, losses, _ = the_run(db)
    assert (run.status, run.steps) == ("completed", 2)


def test_a_module_run_with_dash_m_is_watched(project: Path, tmp_path: Path) -> None:
    package = project / "experiments"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "train.py").write_text(TRAIN)
    db = tmp_path / "runs.db"
    process = watch(project, db, "python", "-m", "experiments.train", "--steps", "2")
    stdout, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 0, stderr
    run, losses, config = the_run(db)
    assert (run.status, run.steps) == ("completed", 2)
    assert losses == pytest.approx(printed_losses(stdout), rel=1e-6)
    assert config["module"] == "experiments.train" and config["argv"] == ["--steps", "2"]


def test_the_scripts_exit_code_passes_through_and_fails_the_run(project: Path, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    process = watch(project, db, "python", "train.py", "--steps", "2", "--exit", "3")
    stdout, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 3, stderr
    run, _, _ = the_run(db)
    assert (run.status, run.steps, run.message) == ("failed", 2, "the script exited with code 3")


def test_no_script_no_command_and_no_optimizer_step_each_say_so_in_one_line(project: Path, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    for command, code, line in (
        (("python", "missing.py"), 2, "gpu-train-monitor watch: error: there is no script missing.py"),
        ((), 2, "gpu-train-monitor watch: error: give the command to run after --"),
        (("python", "-c", "print('hi')"), 0, "gpu-train-monitor: no optimizer step was seen: nothing recorded"),
    ):
        process = watch(project, db, *command)
        stdout, stderr = process.communicate(timeout=WAIT_S)
        assert process.returncode == code
        assert stderr.startswith(line) and len(stderr.splitlines()) == 1, stderr


def test_start_up_imports_neither_core_nor_torch_and_runs_the_sitecustomize_it_hides(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("MARK = 'theirs ran'\n")
    # the start-up file imports our small gpu_train_monitor/__init__.py only: never a `core` (a research folder's own
    # is the script's to import) and never torch (a process that does not import it pays for one small file)
    probe = "import sys; print(sys.modules['sitecustomize'].MARK, 'core' in sys.modules, 'torch' in sys.modules)"
    process = watch(tmp_path, tmp_path / "runs.db", "python", "-c", probe, env={**ENV, "PYTHONPATH": str(theirs)})
    stdout, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 0, stderr
    assert stdout == "theirs ran False False\n"


def test_sigterm_to_the_watch_reaches_the_script(project: Path, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with started_child(project, db, uid="terminated-run") as (process, _):
        process.send_signal(signal.SIGTERM)  # a window or a job scheduler ending the watch
        process.communicate(timeout=WAIT_S)
    run, _, _ = the_run(db)
    assert run.status == "stopped"  # the script's watch stopped it at its next step


@contextlib.contextmanager
def started_child(project: Path, db: Path, uid: str, steps: int = 1) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """A watched script training slowly, once its run (under the uid handed to the watch) has `steps` steps in the
    store; the watch's process and the script's pid. Both are ended after, whatever the test did."""
    process = watch(project, db, "python", "train.py", "--steps", "100000", "--sleep", "0.02", uid=uid)
    assert process.stdout is not None
    pid = int(process.stdout.readline().split()[1])
    try:
        deadline = time.monotonic() + WAIT_S
        while recorded_steps(db, uid) < steps:
            assert time.monotonic() < deadline, "the watched script's run was never recorded"
            time.sleep(0.05)
        yield process, pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        process.kill()
        process.communicate()


def recorded_steps(db: Path, uid: str) -> int:
    try:
        with RunStore(db, readonly=True) as store:
            run_id = store.find_uid(uid)
            return 0 if run_id is None else store.run(run_id).steps
    except StoreError:  # not there yet, or still being created
        return 0


def test_a_script_killed_with_sigkill_ends_interrupted(project: Path, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    # two steps recorded first: on a loaded machine the first report may hold the first step alone
    with started_child(project, db, uid="killed-run", steps=2) as (process, pid):
        os.kill(pid, signal.SIGKILL)
        process.communicate(timeout=WAIT_S)
    assert process.returncode == 128 + signal.SIGKILL
    run, losses, _ = the_run(db)
    assert run.status == "interrupted" and run.steps >= 2 and len(losses) >= 2


def test_ctrl_c_to_the_script_stops_its_run(project: Path, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with started_child(project, db, uid="stopped-run") as (process, pid):
        os.kill(pid, signal.SIGINT)  # what a terminal's Ctrl+C sends it (the watch itself ignores it)
        _, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 130, stderr
    assert "KeyboardInterrupt" in stderr  # the script ended as Ctrl+C ends it, with its own traceback
    run, _, _ = the_run(db)
    assert run.status == "stopped"


WINDOW = (
    "import os, subprocess, sys, time\n"
    "env = dict(os.environ, GPU_TRAIN_MONITOR_STOP_WITH_PID=str(os.getpid()), GPU_TRAIN_MONITOR_RUN_UID='orphan')\n"
    "subprocess.Popen(sys.argv[1:], env=env)\n"
    "time.sleep(600)\n"
)


def test_a_window_killed_with_sigkill_stops_the_script_it_watches(project: Path, tmp_path: Path) -> None:
    import psutil

    db = tmp_path / "runs.db"
    command = [sys.executable, "-P", "-m", "gpu_train_monitor", "watch", "--runs-db", str(db), "--"]
    script = ["python", "train.py", "--steps", "100000", "--sleep", "0.02"]
    window = subprocess.Popen([sys.executable, "-c", WINDOW, *command, *script], cwd=project, env=ENV)
    try:
        deadline = time.monotonic() + WAIT_S
        while recorded_steps(db, "orphan") < 2:
            assert time.monotonic() < deadline, "the watched script's run was never recorded"
            time.sleep(0.05)
        window.kill()  # as a window killed with -9: nothing of it runs to stop what it started
        window.wait(timeout=WAIT_S)
        while the_run(db)[0].status == "running" and time.monotonic() < deadline:
            time.sleep(0.1)
        run, _, _ = the_run(db)
        assert run.status == "stopped"  # the watch got SIGTERM when its window died, and the script stopped
    finally:
        for process in psutil.process_iter():  # whatever is left of it (a failed test)
            with contextlib.suppress(psutil.Error):
                if process.cwd() == str(project) and process.pid != os.getpid():
                    process.kill()


DDP_TRAIN = """\
import torch, torch.distributed as dist
from torch import nn

dist.init_process_group("gloo")
torch.manual_seed(dist.get_rank())
model = nn.parallel.DistributedDataParallel(nn.Linear(6, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    model(torch.randn(4, 6)).pow(2).mean().backward()
    optimizer.step()
    optimizer.zero_grad()
dist.destroy_process_group()
"""


def test_a_torchrun_script_is_one_run_recorded_by_rank_0(tmp_path: Path) -> None:
    (tmp_path / "ddp.py").write_text(DDP_TRAIN)
    db = tmp_path / "runs.db"
    torchrun = ["python", "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", "ddp.py"]
    env = {**ENV, "OMP_NUM_THREADS": "1"}
    process = watch(tmp_path, db, *torchrun, env=env)
    _, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 0, stderr
    run, losses, config = the_run(db)  # one run: the other rank records nothing
    assert (run.status, run.steps, config["model"]) == ("completed", 5, "Linear") and len(losses) == 5
