"""`gpu-train-monitor predict --seq-lens`: a text model's grid over batch x sequence length, as text (rows of batch
sizes, columns of sequence lengths) and as JSON (one prediction per cell), predicted for real for gpt-tiny; sequence
lengths for an image model, or out of bounds, are one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import predict
from tests.support.cli import cli_in_process, user_error_line

GPT = ["--device", "cpu", "--model", "gpt-tiny", "--dataset", "synthetic-text", "--seq-len", "32"]


def test_the_grid_has_a_cell_per_batch_and_sequence_length_in_text_and_json(tmp_path: Path) -> None:
    config = RunConfig(device="cpu", model="gpt-tiny", dataset="synthetic-text")
    peaks = {(b, n): predict(config.replace(seq_len=n), b).peak_bytes for b in (1, 16) for n in (16, 64)}
    capacity = peaks[(16, 16)] + 1  # (16, 16) is tight; (1, *) fit; (16, 64) does not
    assert peaks[(1, 64)] < capacity * 0.9 < peaks[(16, 16)] < peaks[(16, 64)]
    target = tmp_path / "grid.json"
    result = cli_in_process(
        "predict", *GPT, "--batch-sizes", "1,16", "--seq-lens", "16,64", "--capacity", str(capacity),
        "--json", str(target),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("gpt-tiny at batch 128 x 32 tokens (fp32, sgd) on cpu: capacity ")
    assert lines[1].split() == ["batch", "seq", "len", "16", "seq", "len", "64"]
    assert lines[2].split()[0] == "1" and lines[2].count(" fits") == 2
    assert lines[3].split()[0] == "16" and lines[3].endswith("does not fit") and " tight " in lines[3]
    assert lines[4] == "largest batch of these that fits: 1 at 16 tokens, 1 at 64 tokens"
    assert "largest batch that fits at 32 tokens: " in result.stdout
    assert "what if (at batch 128 x 32 tokens; now " in result.stdout
    assert "half the sequence length (16)" in result.stdout
    document = json.loads(target.read_text(encoding="utf-8"))
    cells = [(p["batch_size"], p["seq_len"], p["peak_bytes"], p["verdict"]) for p in document["predictions"]]
    assert cells == [
        (1, 16, peaks[(1, 16)], "fits"),
        (1, 64, peaks[(1, 64)], "fits"),
        (16, 16, peaks[(16, 16)], "tight"),
        (16, 64, peaks[(16, 64)], "does not fit"),
    ]
    assert document["what_if"]["seq_len"] == 32


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--model", "tiny-cnn", "--seq-lens", "128"], ("--seq-lens", "text datasets only", "not synthetic")),
        ([*GPT, "--seq-lens", "0,64"], ("--seq-lens", "from 1 to 65536, got 0")),
        ([*GPT, "--seq-lens", "64,x"], ("--seq-lens", "'64,x' is not a list of sequence lengths")),
    ],
)
def test_bad_sequence_lengths_are_one_line_and_exit_2(args: list[str], expected: tuple[str, ...]) -> None:
    user_error_line(cli_in_process("predict", "--device", "cpu", *args, "--capacity", "1GB"), *expected)
