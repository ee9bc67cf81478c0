"""`gpu-train-monitor predict`: the predicted peak per batch size against the capacity, the what-if table, its
JSON, and bad input as one line (exit 2). The table's arithmetic runs on a prediction model with known answers
(tests.support.predictions) put in place of the real one; one test predicts tiny-cnn for real.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gpu_train_monitor.engine.prediction
from tests.support.cli import cli_in_process, user_error_line
from tests.support.predictions import ModelPredictions

CPU = ["--device", "cpu", "--model", "tiny-cnn"]


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> ModelPredictions:
    """3 MB of weights, gradients and SGD momentum; 100 kB per image (50 kB with autocast)."""
    predictions = ModelPredictions(params=1_000_000, per_sample=100_000)
    monkeypatch.setattr(gpu_train_monitor.engine.prediction, "predict", predictions)
    return predictions


def test_each_batch_size_against_the_capacity_and_the_what_if_table(model: ModelPredictions, tmp_path: Path) -> None:
    target = tmp_path / "predicted.json"
    result = cli_in_process(
        "predict", *CPU, "--batch-size", "64", "--batch-sizes", "100,900,2000",
        "--capacity", "100MB", "--json", str(target),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("tiny-cnn at batch 64")
    assert "capacity 100.00 MB, limit 90.00 MB (10% margin)" in lines[0]
    by_batch = {line.split()[0]: line for line in lines[2:5]}
    assert by_batch["100"].split()[1:3] == ["13.00", "MB"] and by_batch["100"].endswith("fits")  # 3 MB + 10 MB
    assert by_batch["900"].endswith("tight")  # 93 MB: inside the 10% margin
    assert by_batch["2000"].endswith("does not fit")  # 203 MB
    assert "largest batch that fits: 870" in result.stdout  # (90 MB - 3 MB) / 100 kB
    assert "what if (at batch 64; now 9.40 MB, fits)" in result.stdout
    bf16 = next(line for line in lines if line.strip().startswith("bf16 autocast"))
    assert bf16.split()[-2:] == ["1740", "fits"]  # half the activations: twice the batch
    saved = {row["change"]: row for row in json.loads(target.read_text(encoding="utf-8"))["what_if"]["rows"]}
    assert saved["optimizer"]["label"] == "AdamW instead of SGD" and saved["optimizer"]["saved_bytes"] == -1_000_000
    assert saved["bf16"]["saved_bytes"] == 3_200_000 and saved["bf16"]["fits_batch"] == 1740
    document = json.loads(target.read_text(encoding="utf-8"))
    assert [p["batch_size"] for p in document["predictions"]] == [100, 900, 2000]
    assert [p["verdict"] for p in document["predictions"]] == ["fits", "tight", "does not fit"]
    assert document["capacity_bytes"] == 100 * 10**6 and document["limit_bytes"] == 90 * 10**6
    assert document["fits_batch"] == 870


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--batch-sizes", "64,x"], ("--batch-sizes", "'64,x' is not a list of batch sizes")),
        (["--batch-sizes", "0,64"], ("--batch-sizes", "from 1 to 65536, got 0")),
        (["--margin", "1.5"], ("--margin", "from 0 to 0.99")),
        (["--capacity", "lots"], ("--capacity", "is not a size")),
        (["--batch-size", "-4"], ("--batch-size",)),
    ],
)
def test_bad_input_is_one_line_and_exit_2(model: ModelPredictions, args: list[str], expected: tuple[str, ...]) -> None:
    user_error_line(cli_in_process("predict", *CPU, *args), *expected)
    assert model.calls == []  # refused before anything was predicted


def test_a_step_that_cannot_be_traced_says_why_in_one_line_and_exits_1(model: ModelPredictions) -> None:
    model.untraceable = True
    result = cli_in_process("predict", *CPU, "--capacity", "1GB")
    assert result.returncode == 1
    assert result.stdout == "" and "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert "cannot be predicted: a custom op" in line and "find-batch-size" in line


@pytest.mark.slow  # ~20 predictions: the table's searches (5-15 s on 2 busy cores)
def test_tiny_cnn_predicted_for_real() -> None:
    result = cli_in_process("predict", *CPU, "--batch-size", "16", "--capacity", "8GB")
    assert result.returncode == 0, result.stderr
    assert "tiny-cnn at batch 16 (fp32, sgd) on cpu" in result.stdout
    assert "activation checkpointing" in result.stdout and "half the batch (8)" in result.stdout
