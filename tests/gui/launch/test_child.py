"""The data-parallel launcher's command line says exactly the form's config to the CLI, its environment hands
it the uid to record the run under, and the output of a failed launch gives one readable line."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gpu_train_monitor.cli.main import build_parser
from gpu_train_monitor.cli.options import config_from_args
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.distributed.env import ENV_RUN_UID, ENV_STOP_WITH_PID
from gpu_train_monitor.gui.launch.child import child_environment, command_line, last_error_line


@pytest.mark.parametrize(
    "config",
    [
        RunConfig(nproc=2, batch_size=64),
        RunConfig(
            nproc=4,
            batch_size=128,
            device="cpu",
            model="tiny-cnn",
            lr=3e-4,
            weight_decay=1e-5,
            sync_bn=True,
            pin_memory=False,
            epochs=3,
            max_steps=None,
            report_interval=0.05,
            dataset="cifar10",
            data_dir="/data/with space",
            optimizer="adamw",
            amp="bf16",
            placement="stream",
            workers=2,
        ),
        RunConfig(nproc=2, batch_size=2, max_steps=7, epochs=None, seed=2**31 - 1, momentum=0.0),
    ],
)
def test_the_command_line_gives_the_cli_the_form_s_config_exactly(config, tmp_path):
    args = command_line(config, tmp_path / "runs.sqlite3")
    assert args[:4] == [sys.executable, "-m", "gpu_train_monitor", "run"]
    parsed = build_parser().parse_args(args[3:])
    assert config_from_args(parsed) == config
    assert Path(parsed.runs_db) == tmp_path / "runs.sqlite3" and not parsed.no_record
    assert parsed.resume is None and not parsed.checkpoint_every  # a data-parallel run saves no checkpoints


def test_a_resume_is_passed_on_for_the_cli_to_judge(tmp_path):
    args = command_line(RunConfig(nproc=2, batch_size=64), tmp_path / "r.sqlite3", resume="/ck/step-9.pt")
    assert build_parser().parse_args(args[3:]).resume == "/ck/step-9.pt"


@pytest.mark.parametrize(
    "output, line",
    [
        ("loading\ngpu-train-monitor: error: --batch-size: 65 does not split\n", "--batch-size: 65 does not split"),
        ("gpu-train-monitor: error: first\nsomething else later\n", "first"),  # the CLI's own error wins
        (
            "step 3\r 10%|#  | 3/30 [00:01<00:09, 2.9step/s]\rgpu-train-monitor: failed: rank 1 (pid 12) was killed by "
            "SIGKILL\n",
            "gpu-train-monitor: failed: rank 1 (pid 12) was killed by SIGKILL",
        ),
        (
            'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\nValueError: bad\n==========\n',
            "ValueError: bad",
        ),
        ("", ""),  # nothing to show: the launcher says so in its own words
        ("==========\n 10%|#  | 3/30 [00:01<00:09, 2.9it/s]\n", ""),
    ],
)
def test_the_error_line_shown_for_a_failed_launch(output, line):
    assert last_error_line(output) == line


def test_the_child_is_handed_the_uid_its_run_is_recorded_under():
    env = child_environment("0123abcd")
    assert env[ENV_RUN_UID] == "0123abcd" and env[ENV_STOP_WITH_PID] == str(os.getpid())
    assert ENV_RUN_UID not in os.environ  # the window's own environment is left alone


def test_the_child_gets_no_folder_of_ours_on_its_python_path(monkeypatch):
    # installed, a folder of ours on the path would make a watched script's `import config` (or data, model, gui...)
    # import our sub-package of that name
    monkeypatch.setenv("PYTHONPATH", "/their/path")
    assert child_environment("0123abcd")["PYTHONPATH"] == "/their/path"
    monkeypatch.delenv("PYTHONPATH")
    assert "PYTHONPATH" not in child_environment("0123abcd")
