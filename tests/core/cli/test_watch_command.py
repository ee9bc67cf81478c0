"""`watch`'s parts that need no child process: which script a Python command line runs (so a missing one is one
line before anything starts), the child's environment, and what the store is told after the script exited."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest

from gpu_train_monitor.cli.watch_command import (
    child_environment,
    command_problem,
    nothing_recorded,
    python_script,
    script_error,
    settle_run,
)
from gpu_train_monitor.events.events import RunFinished
from gpu_train_monitor.store.recorder import RunRecorder
from gpu_train_monitor.store.run_store import RunStore
from gpu_train_monitor.watch.startup import ENV_SCRIPT_ERROR, ENV_WATCH_NAME, SITE_FOLDER
from tests.support.cli import cli_in_process
from tests.support.events import started, summary


@pytest.mark.parametrize(
    ("arguments", "script"),
    [
        (["train.py", "--lr", "3"], "train.py"),
        (["-u", "-X", "dev", "-W", "ignore", "train.py"], "train.py"),
        (["-OO", "-Wignore", "-Xfrozen_modules=off", "--check-hash-based-pycs", "never", "t.py"], "t.py"),
        (["-m", "package.train", "x.py"], None),
        (["-um", "package.train"], None),
        (["-c", "print(1)"], None),
        (["-"], "-"),
        ([], None),
    ],
)
def test_the_script_of_a_python_command_line(arguments: list[str], script: str | None) -> None:
    assert python_script(arguments) == script


def test_a_command_that_cannot_run_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert command_problem([]).startswith("give the command to run after --")
    assert command_problem(["no-such-program-here"]) == "there is no program no-such-program-here"
    assert command_problem([sys.executable, str(tmp_path / "gone.py")]) == f"there is no script {tmp_path / 'gone.py'}"
    assert command_problem(["python3", "-m", "anything"]) is None
    (tmp_path / "train.py").write_text("")
    assert command_problem([sys.executable, str(tmp_path / "train.py"), "--flag"]) is None
    monkeypatch.chdir(tmp_path)
    assert command_problem(["train.py"]) == "train.py is a script: run it as watch -- python train.py"


def test_the_cli_refuses_a_missing_script_in_one_line(tmp_path: Path) -> None:
    result = cli_in_process("watch", "--runs-db", str(tmp_path / "runs.db"), "--", "python", str(tmp_path / "x.py"))
    assert result.returncode == 2
    assert result.stderr == f"gpu-train-monitor watch: error: there is no script {tmp_path / 'x.py'}\n"
    assert not (tmp_path / "runs.db").exists()


def test_the_childs_environment_puts_our_start_up_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PYTHONPATH", "/their/path")
    monkeypatch.setenv(ENV_WATCH_NAME, "a stale name")
    env = child_environment("uid-1", tmp_path / "runs.db", "")
    assert env["PYTHONPATH"] == f"{SITE_FOLDER}{os.pathsep}/their/path"
    assert (SITE_FOLDER / "sitecustomize.py").is_file()
    assert env["GPU_TRAIN_MONITOR_RUN_UID"] == "uid-1"
    assert env["GPU_TRAIN_MONITOR_RUNS_DB"] == str(tmp_path / "runs.db")
    assert ENV_WATCH_NAME not in env
    assert child_environment("uid-1", tmp_path / "runs.db", "mine")[ENV_WATCH_NAME] == "mine"


def test_a_completed_run_whose_script_exited_non_zero_ends_failed(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    uid = "watched-uid"
    recorder = RunRecorder(db)
    recorder(dataclasses.replace(started(epochs=None), run_uid=uid))
    recorder(RunFinished("completed", 1_950, "", False, summary()))
    recorder.close()
    run_id = recorder.run_id
    assert settle_run(db, uid, 0)
    with RunStore(db) as store:
        assert store.run(run_id).status == "completed"  # exit 0: as recorded
    assert settle_run(db, uid, 3)
    with RunStore(db) as store:
        run = store.run(run_id)
        assert (run.status, run.message) == ("failed", "the script exited with code 3")
    assert not settle_run(db, "another-uid", 0)  # nothing recorded under that uid
    assert not settle_run(tmp_path / "none.db", uid, 0)
    assert not (tmp_path / "none.db").exists()


def test_a_script_that_recorded_nothing_is_told_by_its_own_error_else_its_code(tmp_path: Path) -> None:
    error_file = tmp_path / "error.txt"
    assert child_environment("uid-1", tmp_path / "runs.db", "", error_file)[ENV_SCRIPT_ERROR] == str(error_file)
    assert script_error(error_file) == ""  # none written: it did not die of an exception
    error_file.write_text("ValueError: no \x1b[2Jdata (train.py, line 4)")
    error = script_error(error_file)
    assert error == "ValueError: no \\x1b[2Jdata (train.py, line 4)"  # a terminal is not told to clear itself
    assert nothing_recorded(1, error) == (
        "gpu-train-monitor: error: the script failed before its first optimizer step, nothing recorded: " + error
    )
    assert nothing_recorded(2, "").endswith(
        "the script exited with code 2 before its first optimizer step: nothing recorded"
    )
    assert nothing_recorded(0, "") == "gpu-train-monitor: no optimizer step was seen: nothing recorded"
