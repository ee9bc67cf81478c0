"""`watch --` at the edges: a script that exits non-zero after its steps is failed by itself (so a `watch --remote`
following it never reads `completed`), steps made just before `os._exit` or a long idle are kept, a larger
optimizer that never steps does not hide the one that does, and the watch's own torch warnings stay out of the
script's stderr."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpu_train_monitor.cli.watch_command import child_environment
from gpu_train_monitor.store.run_store import RunStore, StoreError
from tests.support.processes import WAIT_S
from tests.support.watched_loops import WatchedScript, run_watched, watched

TRAIN = """
import os, sys, time, torch
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    model(torch.randn(5, 4)).pow(2).mean().backward()
    optimizer.step()
    optimizer.zero_grad()
"""


def test_a_script_that_exits_3_after_its_steps_fails_its_run_itself(tmp_path: Path) -> None:
    # the script's own process alone, as the agent's watch runs it before it settles anything: no watch command
    (tmp_path / "train.py").write_text(TRAIN + "sys.exit(3)\n")
    db = tmp_path / "runs.db"
    env = child_environment("exits-3", db, "")
    result = subprocess.run(
        [sys.executable, "train.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=WAIT_S
    )
    assert result.returncode == 3, result.stderr
    run, losses, _ = WatchedScript(3, "", "", db).run()
    assert (run.status, run.steps, run.message) == ("failed", 3, "the script exited with code 3")


@pytest.mark.parametrize("code, status", [(0, "completed"), (5, "failed")])
def test_steps_made_just_before_os_exit_are_kept(tmp_path: Path, code: int, status: str) -> None:
    result = run_watched(tmp_path, TRAIN + f"os._exit({code})\n")
    assert result.returncode == code, result.stderr
    run, losses, _ = result.run()
    assert (run.status, run.steps, len(losses)) == (status, 3, 3)


def test_steps_made_before_a_long_idle_are_reported_during_it(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN + "print('trained', flush=True)\ntime.sleep(60)\n")
    db = tmp_path / "runs.db"
    process = watched(tmp_path, db, "python", "train.py", uid="idle")
    try:
        assert process.stdout is not None and process.stdout.readline() == "trained\n"
        deadline = time.monotonic() + 20
        steps = 0
        while steps < 3 and time.monotonic() < deadline:  # the script sleeps: no next step will report them
            time.sleep(0.2)
            try:
                with RunStore(db, readonly=True) as store:
                    run_id = store.find_uid("idle")
                    steps = 0 if run_id is None else len(store.steps(run_id).steps)
            except StoreError:
                continue
        assert steps == 3
    finally:
        process.kill()
        process.communicate()


def test_a_larger_optimizer_that_never_steps_does_not_hide_the_steps(tmp_path: Path) -> None:
    teacher = "teacher = torch.nn.Linear(300, 300)\nkept = torch.optim.AdamW(teacher.parameters())\n"
    result = run_watched(tmp_path, TRAIN.replace("optimizer = ", teacher + "optimizer = "))
    assert result.returncode == 0, result.stderr
    run, losses, config = result.run()
    assert (run.status, run.steps, len(losses), config["optimizer"]) == ("completed", 3, 3, "SGD")


def test_the_watchs_torch_warnings_stay_out_of_the_scripts_stderr(tmp_path: Path) -> None:
    compiled = TRAIN.replace("for step", "compiled = torch.compile(model, backend='eager')\nfor step").replace(
        "    model(torch.randn", "    compiled(torch.randn"
    )
    result = run_watched(tmp_path, compiled)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # torch.compile says nothing of the watch's hooks
    run, _, config = result.run()
    assert (run.status, run.steps, config["model"]) == ("completed", 3, "Linear")
