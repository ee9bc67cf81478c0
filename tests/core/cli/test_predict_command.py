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


def test_by_module_prints_and_saves_rows_that_add_up_to_each_peak(tmp_path: Path) -> None:
    target = tmp_path / "predicted.json"
    result = cli_in_process(
        "predict", *CPU, "--batch-sizes", "8,16", "--capacity", "8GB", "--by-module", "layers", "--json", str(target)
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for batch in (8, 16):
        start = lines.index(next(line for line in lines if line.startswith(f"by module at batch {batch} ")))
        names = [line.split()[0] for line in lines[start + 2 : start + 40] if line.startswith("  ")]
        assert names[0] == "features.0" and "features.0.0" in names  # a block, then its layers (indented)
        assert "(outside" in names and "total" in names
    for prediction in json.loads(target.read_text(encoding="utf-8"))["predictions"]:
        rows = prediction["modules"]
        parts = ("activations_bytes", "params_bytes", "grads_bytes", "optimizer_bytes", "temporaries_bytes")
        assert sum(row[key] for row in rows for key in parts) == prediction["peak_bytes"]
        assert rows[-1]["name"] == "(outside modules)" and rows[0]["layers"]
        assert sum(row["params_bytes"] for row in rows) == prediction["params_bytes"]
    without = cli_in_process("predict", *CPU, "--batch-size", "8", "--capacity", "8GB")
    assert "by module" not in without.stdout


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("import not_a_module_anywhere\ndef make(num_classes):\n    pass\n", "not_a_module_anywhere"),
        ("def make(num_classes):\n    raise ValueError('width must be even')\n", "ValueError: width must be even"),
        ("def make(num_classes):\n    return undefined_name\n", "NameError"),
        ("def other(num_classes):\n    pass\n", "make"),
    ],
)
def test_your_own_model_that_fails_to_import_or_build_is_one_line_and_exit_2(
    source: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the finder would fail the same way: the model's own error, not advice to run it
    (tmp_path / "mine.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    result = cli_in_process("predict", "--device", "cpu", "--model", "mine.py:make")
    assert result.returncode == 2, result.stderr
    line = user_error_line(result)
    assert line.startswith("gpu-train-monitor: error: --model: mine.py:make") and said in line, line
    assert "find-batch-size" not in result.stderr


def test_your_own_model_that_needs_values_to_be_built_is_measured_by_the_finder_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mine.py").write_text(
        "import torch\nfrom torch import nn\n"
        "def make(num_classes):\n"
        "    width = int(torch.ones(1).sum().item()) * 8  # a value: the meta device has none\n"
        "    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, width), nn.Linear(width, num_classes))\n"
    )
    monkeypatch.chdir(tmp_path)
    result = cli_in_process("predict", "--device", "cpu", "--model", "mine.py:make")
    assert result.returncode == 1, result.stderr
    assert "cannot be predicted without running it" in result.stderr and "find-batch-size" in result.stderr


PREDICT_BIG = """
import resource, sys
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import predict
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
p = predict(RunConfig(model=sys.argv[1], device="cpu", batch_size=32, optimizer=sys.argv[2]))
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
print(p.total_bytes, grown)
"""


@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
def test_a_prediction_never_needs_the_memory_it_predicts(tmp_path: Path, optimizer: str) -> None:
    """A 1.7 GB model (fused optimizer, the default) is predicted at over 5 GB while the process grows by a
    fraction of a GB: the fused update has no fake kernel on the CPU and once ran for real on zeros (6 GB)."""
    import subprocess
    import sys

    (tmp_path / "big.py").write_text(
        "from torch import nn\n"
        "def make(num_classes):\n"
        "    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 20000), nn.Linear(20000, 20000),\n"
        "                         nn.Linear(20000, num_classes))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", PREDICT_BIG, "big.py:make", optimizer],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    predicted, grown = (int(word) for word in done.stdout.split())
    assert predicted > 5e9 and grown < 1e9, (predicted, grown)
