"""The child of a run or a watched script on the machine connected to: the form's command line with the machine
put after the subcommand, and a remote script's paths passed as typed (they are that machine's)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.gui.launch.child import command_line
from gpu_train_monitor.gui.launch.remote_command import RemoteMachine, on_machine
from gpu_train_monitor.gui.launch.watch_command import WatchRequest


def test_a_run_there_is_the_forms_command_with_the_machine_after_run():
    args = command_line(RunConfig(device="cuda:0", batch_size=64), Path("/w/runs.sqlite3"))
    there = on_machine(args, RemoteMachine("me@gpu-box:2222", "~/venv/bin/gpu-train-monitor agent"))
    assert there[:6] == [
        sys.executable,
        "-m",
        "gpu_train_monitor",
        "run",
        "--remote=me@gpu-box:2222",
        "--agent-command=~/venv/bin/gpu-train-monitor agent",
    ]
    assert there[6:] == args[4:]  # every option as for a run here, recorded into the window's store
    assert there[-1] == "--runs-db=/w/runs.sqlite3" and "--device=cuda:0" in there
    assert on_machine(args, RemoteMachine("gpu-box"))[4:6] == ["--remote=gpu-box", "--device=cuda:0"]  # default agent


def test_a_script_there_keeps_its_paths_as_typed_and_runs_with_that_machines_python():
    request = WatchRequest("~/project/train.py", "--epochs 3 --name 'a b'", "~/project", "mnist")
    args = on_machine(request.remote_command_line(Path("/w/runs.sqlite3")), RemoteMachine("gpu-box"))
    watch = args.index("watch")
    assert args[watch + 1] == "--remote=gpu-box"
    assert "--remote-cwd=~/project" in args and "--name=mnist" in args and "--runs-db=/w/runs.sqlite3" in args
    assert args[args.index("--") + 1 :] == ["python", "~/project/train.py", "--epochs", "3", "--name", "a b"]


def test_a_remote_scripts_files_are_not_looked_for_here_but_its_arguments_are_checked():
    assert WatchRequest("/only/there/train.py").problem(remote=True) is None
    assert WatchRequest("/only/there/train.py").problem() == "There is no file /only/there/train.py."
    assert WatchRequest("train.py", "--name 'open").problem(remote=True) == (
        "The arguments cannot be split: a quotation mark is not closed."
    )
    assert WatchRequest("  ").problem(remote=True) == "Choose the script to watch."


def test_a_command_that_is_not_core_run_or_watch_is_refused():
    with pytest.raises(ValueError):
        on_machine([sys.executable, "train.py"], RemoteMachine("gpu-box"))
