"""A comparison of GPT runs: each one's throughput in tokens/s, in its JSON and the CLI's table."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from gpu_train_monitor.cli.compare_command import comparison_table
from gpu_train_monitor.compare.comparison import Comparison
from gpu_train_monitor.compare.plan import plan
from gpu_train_monitor.compare.result import ContenderResult, conclude
from gpu_train_monitor.config.run_config import RunConfig
from tests.support.cli import cli_in_process

BASE = RunConfig(
    device="cpu", model="gpt-tiny", dataset="synthetic-text", layers=1, width=32, heads=2, seq_len=16,
    synthetic_samples=256, batch_size=16, max_steps=12, report_interval=0.01,
)  # fmt: skip
# 12 steps: a step of this GPT takes about 3 ms on a quiet machine, so 3 steps could all fall in the first report
# (the warm-up, 10 ms at least) and leave no tokens/s


def test_fused_against_plain_attention_races_in_tokens_per_second() -> None:
    outcome = Comparison(BASE, [{"attention": "fused"}, {"attention": "plain"}]).run()
    assert outcome.status == "completed", [run.message for run in outcome.runs]
    for run in outcome.runs:
        assert run.tokens_per_sample == 16 and run.tokens_per_s == pytest.approx(run.samples_per_s * 16)
        assert run.to_dict()["tokens_per_s"] == run.tokens_per_s
    table = comparison_table(outcome)
    assert "tokens/s" in table.splitlines()[0] and "images/s" not in table
    assert f"{outcome.runs[0].tokens_per_s:,.0f}" in table


def test_the_compare_command_takes_a_gpt(tmp_path: Path) -> None:
    target = tmp_path / "compare.json"
    args = ["--device", "cpu", "--model", "gpt-tiny", "--dataset", "synthetic-text", "--layers", "1", "--width", "32"]
    result = cli_in_process(
        "compare", *args, "--seq-len", "16", "--synthetic-samples", "256", "--batch-size", "16", "--max-steps", "12",
        "--report-interval", "0.01",
        "--vs", "amp=off", "--vs", "activation_checkpointing=true", "--no-record", "--json", str(target),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "tokens/s" in result.stdout
    runs = json.loads(target.read_text(encoding="utf-8"))["runs"]
    assert [run["status"] for run in runs] == ["completed", "completed"]
    assert all(run["tokens_per_s"] == pytest.approx(run["samples_per_s"] * 16) for run in runs)


def test_checkpointing_a_text_run_states_its_cost_in_tokens_per_second() -> None:
    runs = plan(BASE, [{"activation_checkpointing": False}, {"activation_checkpointing": True}])

    def measured(index: int, rate: float, peak: int) -> ContenderResult:
        return dataclasses.replace(
            ContenderResult(index, "", {}, "completed", rate, (rate - 5, rate + 5), 2.1, 1, None, 1.0, 12, "", (2.3,)),
            readings=10, peak_bytes=peak, peak_method="saved-tensors", tokens_per_sample=16,
        )  # fmt: skip

    outcome = conclude(runs, [measured(0, 100.0, 40_000_000), measured(1, 80.0, 20_000_000)], 12, "gpt-tiny", False)
    assert "25% more time per token (1600 tokens/s without, 1280 with)" in outcome.headline
