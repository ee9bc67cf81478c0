"""gpu_train_monitor.config.command_line: a config's fields become `--flag=value` words, so a value that looks like an
option (a remote agent's `start` takes a config from the other machine) can never become one."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_train_monitor.cli.main import build_parser
from gpu_train_monitor.config.command_line import command_line
from gpu_train_monitor.config.run_config import RunConfig


@pytest.mark.parametrize(
    "smuggled",
    ["--runs-db=/tmp/elsewhere.sqlite3", "tiny-cnn --runs-db /tmp/x", "tiny-cnn\n--device=cpu", "-h", "--help"],
)
def test_a_value_that_looks_like_an_option_stays_the_field_s_value(smuggled: str) -> None:
    config = RunConfig.from_dict({**RunConfig().to_dict(), "model": smuggled, "data_dir": smuggled})
    store = Path("/w/runs.sqlite3")
    args = command_line(config, store)
    parsed = build_parser().parse_args(args[3:])  # what `python -m gpu_train_monitor` reads: from `run` on
    assert parsed.command == "run"
    assert parsed.model == config.model and parsed.data_dir == config.data_dir
    assert parsed.runs_db == str(store)  # the store the agent chose, not one a value named
    assert parsed.device == config.device
