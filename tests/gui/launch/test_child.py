"""The data-parallel launcher's command line says exactly the form's config to the CLI, and its output says
the run it recorded or, for a failed launch, one readable line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core.cli.main import build_parser
from core.cli.options import config_from_args
from core.config.run_config import RunConfig
from gui.launch.child import command_line, last_error_line, recorded_run_id


@pytest.mark.parametrize("config", [
    RunConfig(nproc=2, batch_size=64),
    RunConfig(nproc=4, batch_size=128, device="cpu", model="tiny-cnn", lr=3e-4, weight_decay=1e-5, sync_bn=True,
              pin_memory=False, epochs=3, max_steps=None, report_interval=0.05, dataset="cifar10",
              data_dir="/data/with space", optimizer="adamw", amp="bf16", placement="stream", workers=2),
    RunConfig(nproc=2, batch_size=2, max_steps=7, epochs=None, seed=2**31 - 1, momentum=0.0),
])
def test_the_command_line_gives_the_cli_the_form_s_config_exactly(config, tmp_path):
    args = command_line(config, tmp_path / "runs.sqlite3")
    assert args[:4] == [sys.executable, "-m", "core", "run"]
    parsed = build_parser().parse_args(args[3:])
    assert config_from_args(parsed) == config
    assert Path(parsed.runs_db) == tmp_path / "runs.sqlite3" and not parsed.no_record
    assert parsed.resume is None and not parsed.checkpoint_every  # a data-parallel run saves no checkpoints


def test_a_resume_is_passed_on_for_the_cli_to_judge(tmp_path):
    args = command_line(RunConfig(nproc=2, batch_size=64), tmp_path / "r.sqlite3", resume="/ck/step-9.pt")
    assert build_parser().parse_args(args[3:]).resume == "/ck/step-9.pt"


@pytest.mark.parametrize("output, line", [
    ("loading\ngpu-train-monitor: error: --batch-size: 65 does not split\n", "--batch-size: 65 does not split"),
    ("gpu-train-monitor: error: first\nsomething else later\n", "first"),  # the CLI's own error wins
    ("step 3\r 10%|#  | 3/30 [00:01<00:09, 2.9step/s]\rgpu-train-monitor: failed: rank 1 (pid 12) was killed by "
     "SIGKILL\n", "gpu-train-monitor: failed: rank 1 (pid 12) was killed by SIGKILL"),
    ("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nValueError: bad\n"
     "==========\n", "ValueError: bad"),
    ("", ""),  # nothing to show: the launcher says so in its own words
    ("==========\n 10%|#  | 3/30 [00:01<00:09, 2.9it/s]\n", ""),
])
def test_the_error_line_shown_for_a_failed_launch(output, line):
    assert last_error_line(output) == line


def test_the_run_the_cli_recorded_is_read_from_its_output():
    output = ("recorded as run 3 in /tmp/a.sqlite3 (`gpu-train-monitor runs show 3`)\n"
              "recorded as run 12 in /tmp/runs dir/r.sqlite3 (`gpu-train-monitor runs show 12`)\n")
    assert recorded_run_id(output) == 12
    assert recorded_run_id("step 3\nrun 4 completed\n") is None
