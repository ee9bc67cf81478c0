"""Language-model runs from the command line, in this process: the GPT on synthetic text learns (its loss falls well
below uniform over bytes), says tokens/s in its summary, its JSON (`tokens_per_s`) and the run store; a text file
trains, resident or streamed; a checkpoint resumes to the losses of an unbroken run; bad text input is one line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from gpu_train_monitor.store.run_store import RunStore
from tests.support.cli import cli_in_process, user_error_line

# one block of width 32 over sequences of 16 tokens: 256 sequences, 16 steps an epoch
TINY = ["--device", "cpu", "--model", "gpt-tiny", "--layers", "1", "--width", "32", "--heads", "2", "--seq-len", "16"]
SYNTHETIC = [*TINY, "--dataset", "synthetic-text", "--synthetic-samples", "256", "--batch-size", "16"]
UNIFORM = math.log(256)  # the loss of a model that knows nothing about bytes


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str, Path]:
    """40 steps of AdamW on synthetic text, recorded: (its summary JSON, its stdout, the store)."""
    folder = tmp_path_factory.mktemp("text-run")
    store, summary = folder / "runs.db", folder / "summary.json"
    result = cli_in_process(
        "run", *SYNTHETIC, "--optimizer", "adamw", "--lr", "0.01", "--max-steps", "40", "--checkpoint-every", "0",
        "--runs-db", str(store), "--summary-json", str(summary),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(summary.read_text(encoding="utf-8")), result.stdout, store


def test_the_gpt_learns_synthetic_text_well_below_uniform(learned: tuple[dict, str, Path]) -> None:
    summary, stdout, _ = learned
    assert abs(summary["loss_first"] - UNIFORM) < 0.3  # it starts knowing nothing
    assert summary["loss_last"] < 0.6 * UNIFORM, summary["loss_last"]  # the symbols and some of their order
    assert "steps       40 (640 sequences in " in stdout


def test_a_text_run_reports_tokens_per_second(learned: tuple[dict, str, Path]) -> None:
    summary, stdout, store_path = learned
    assert summary["tokens_per_s"] == pytest.approx(summary["samples_per_s"] * 16)
    assert f"throughput  {summary['tokens_per_s']:,.0f} tokens/s" in stdout
    assert summary["config"]["seq_len"] == 16 and summary["config"]["layers"] == 1
    with RunStore(store_path) as store:
        (row,) = store.list_runs()
    assert row.throughput_unit == "tokens/s" and row.speed == pytest.approx(row.samples_per_s * 16)
    listed = cli_in_process("runs", "list", "--runs-db", str(store_path))
    assert listed.returncode == 0 and "tok/s" in listed.stdout and "img/s" not in listed.stdout
    shown = cli_in_process("runs", "show", str(row.id), "--runs-db", str(store_path))
    assert "tokens/s" in shown.stdout and "16 tokens each" in shown.stdout


def test_an_image_run_keeps_images_per_second(tmp_path: Path) -> None:
    target = tmp_path / "summary.json"
    args = ["--device", "cpu", "--model", "tiny-cnn", "--synthetic-samples", "256", "--batch-size", "64"]
    result = cli_in_process("run", *args, "--max-steps", "2", "--no-record", "--summary-json", str(target))
    assert result.returncode == 0, result.stderr
    assert json.loads(target.read_text(encoding="utf-8"))["tokens_per_s"] is None
    assert " images/s" in result.stdout and "tokens/s" not in result.stdout


@pytest.mark.parametrize("placement", ["resident", "stream"])
def test_a_text_file_trains_resident_or_streamed(tmp_path: Path, placement: str) -> None:
    path = tmp_path / "poem.txt"
    path.write_text("the cat sat on the mat and the dog sat on the log.\n" * 60, encoding="utf-8")
    result = cli_in_process(
        "run", *TINY, "--dataset", f"text:{path}", "--batch-size", "8", "--max-steps", "3", "--placement", placement,
        "--no-record", "--checkpoint-every", "0",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"text:{path} (172 train / 19 val sequences of 16 tokens" in result.stderr  # 3,060 bytes: 306 held out
    assert f"{placement} placement" in result.stderr and "tokens/s" in result.stdout


def test_a_checkpoint_resumes_a_text_run_to_the_losses_of_an_unbroken_one(tmp_path: Path) -> None:
    common = [*SYNTHETIC, "--no-record", "--seed", "5"]
    whole = tmp_path / "whole.json"
    assert cli_in_process("run", *common, "--max-steps", "6", "--summary-json", str(whole)).returncode == 0
    folder = tmp_path / "checkpoints"
    first = cli_in_process("run", *common, "--max-steps", "3", "--checkpoint-dir", str(folder))
    assert first.returncode == 0, first.stderr
    (saved,) = folder.glob("*/step-3.pt")
    resumed = tmp_path / "resumed.json"
    result = cli_in_process(
        "run", "--resume", str(saved), "--max-steps", "6", "--no-record", "--summary-json", str(resumed)
    )
    assert result.returncode == 0, result.stderr
    again, unbroken = (json.loads(p.read_text(encoding="utf-8")) for p in (resumed, whole))
    assert again["steps"] == 6 and again["loss_last"] == pytest.approx(unbroken["loss_last"], rel=1e-5)


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_a_file_that_is_not_text_is_one_line(tmp_path: Path) -> None:
    binary = write(tmp_path / "model.bin", bytes(range(256)) * 16)
    result = cli_in_process("run", *TINY, "--dataset", f"text:{binary}", "--no-record")
    user_error_line(result, "--dataset", str(binary), "is not a text file", "NUL bytes")
    empty = write(tmp_path / "empty.txt", b"")
    user_error_line(cli_in_process("run", *TINY, "--dataset", f"text:{empty}", "--no-record"), "--dataset", "is empty")
    missing = tmp_path / "missing.txt"
    line = user_error_line(cli_in_process("run", *TINY, "--dataset", f"text:{missing}", "--no-record"), "--dataset")
    assert "no text file" in line


def test_a_sequence_longer_than_the_text_is_one_line(tmp_path: Path) -> None:
    short = write(tmp_path / "short.txt", b"to be or not to be")
    result = cli_in_process("run", *TINY[:-1], "64", "--dataset", f"text:{short}", "--no-record")
    user_error_line(result, "--seq-len", "64 tokens is longer than the text", "18 bytes", "use at most 17")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--model", "gpt-tiny", "--dataset", "synthetic"], ["--dataset", "gpt-tiny is a language model"]),
        (["--model", "tiny-cnn", "--dataset", "synthetic-text"], ["--model", "tiny-cnn is an image model"]),
        (["--model", "tiny-cnn", "--layers", "3"], ["--layers", "sizes the GPT models only"]),
        (["--model", "gpt-tiny", "--dataset", "synthetic-text", "--width", "50", "--heads", "4"], ["--width", "50"]),
        (["--model", "gpt-tiny", "--dataset", "text:"], ["--dataset", "names no file"]),
        (["--model", "gpt-tiny", "--dataset", "synthetic-text", "--seq-len", "0"], ["--seq-len", "from 1 to"]),
        (["--model", "gpt-tiny", "--dataset", "synthetic-text", "--attention", "sparse"], ["--attention", "fused"]),
    ],
)
def test_a_model_and_data_that_do_not_go_together_are_one_line(args: list[str], expected: list[str]) -> None:
    user_error_line(cli_in_process("run", "--device", "cpu", *args, "--no-record"), *expected)
