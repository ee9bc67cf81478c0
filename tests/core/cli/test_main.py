"""The headless command line, run the way a user runs it: `main([...])` in this process (what it prints and its
exit code), and once as `python -m gpu_train_monitor ...` in a subprocess; a real resource limit and Ctrl+C need a
process of their own: tests/e2e/test_resource_limits.py and tests/e2e/test_ctrl_c.py.

Bad input must end with exit code 2 and exactly one line on stderr that names the option and says
what is allowed; a traceback is a bug.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from gpu_train_monitor.cli.main import build_parser, main
from gpu_train_monitor.cli.options import config_from_args
from gpu_train_monitor.config.bounds import BOUNDS
from gpu_train_monitor.config.run_config import RunConfig, option_name
from gpu_train_monitor.device.devices import list_devices
from tests.support.cli import FAST, cli, cli_in_process, user_error_line

SUMMARY_KEYS = {
    "status",
    "steps",
    "samples",
    "wall_s",
    "samples_per_s",
    "loss_first",
    "loss_last",
    "val_accuracy",
    "device",
    "device_name",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
    "peak_rss_bytes",
    "config",
}


# --- bad input, one line each -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--batch-size", "0"], ["--batch-size", "an integer from 1 to 65536", "got 0"]),
        (["--lr", "-1"], ["--lr", "a number from 1e-08 to 10"]),
        (["--epochs", "0"], ["--epochs", "an integer from 1 to 10000"]),
        (["--optimizer", "rmsprop"], ["--optimizer", "one of sgd, adamw", "rmsprop"]),
        (["--placement", "gpu"], ["--placement", "one of auto, stream, resident"]),
        (["--lr", "nan"], ["--lr", "a number from 1e-08 to 10"]),
        (["--batch-size", "abc"], ["--batch-size", "invalid int value", "abc"]),
        (["--no-such-option"], ["unrecognized arguments", "--no-such-option"]),
    ],
)
def test_out_of_range_and_malformed_options_exit_2_with_one_line(args: list[str], expected: list[str]) -> None:
    user_error_line(cli_in_process("run", *args), *expected)


def test_bad_input_ends_the_process_with_exit_2_and_one_line_not_a_traceback() -> None:
    """The same as a real process (the exit code and stderr a script or shell sees), once."""
    user_error_line(cli("run", "--batch-size", "0"), "--batch-size", "an integer from 1 to 65536", "got 0")


MISSING_GPU = torch.cuda.device_count() + 7 if torch.cuda.is_available() else 7


def _write_mnist_with_corrupt_images(root: Path) -> Path:
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True)
    good = {
        "train-labels-idx1-ubyte": (0x801, np.zeros(4, np.uint8)),
        "t10k-images-idx3-ubyte": (0x803, np.zeros((2, 28, 28), np.uint8)),
        "t10k-labels-idx1-ubyte": (0x801, np.zeros(2, np.uint8)),
    }
    for name, (magic, array) in good.items():
        header = struct.pack(">I", magic) + struct.pack(f">{array.ndim}I", *array.shape)
        (raw / name).write_bytes(header + array.tobytes())
    corrupt = raw / "train-images-idx3-ubyte"
    corrupt.write_bytes(b"<html>not an IDX file</html>")  # what a captive portal leaves behind
    return corrupt


def test_unavailable_device_lists_the_devices_that_exist() -> None:
    available = ", ".join(d.spec for d in list_devices(query_free=False))
    user_error_line(
        cli_in_process("run", "--device", f"cuda:{MISSING_GPU}"),
        "--device",
        f"cuda:{MISSING_GPU}",
        "not available",
        f"available: {available}",
    )


def test_unknown_model_says_how_to_list_models() -> None:
    user_error_line(
        cli_in_process("run", *FAST, "--model", "nosuchnet"), "--model", "nosuchnet", "gpu-train-monitor models"
    )


def test_missing_data_folder_names_it_and_how_to_get_the_files() -> None:
    line = user_error_line(
        cli_in_process("run", *FAST, "--dataset", "mnist", "--data-dir", "/missing"),
        "/missing",
        "does not exist",
        "--download",
    )
    assert "MNIST/raw" in line  # where the files are expected


def test_corrupt_dataset_file_is_named(tmp_path: Path) -> None:
    corrupt = _write_mnist_with_corrupt_images(tmp_path)
    user_error_line(
        cli_in_process("run", *FAST, "--dataset", "mnist", "--data-dir", str(tmp_path)),
        str(corrupt),
        "bad magic number",
    )


def test_amp_mode_the_device_cannot_run_is_refused() -> None:
    user_error_line(cli_in_process("run", *FAST, "--amp", "fp16"), "--amp", "fp16", "bf16 or off")


def test_batch_larger_than_the_dataset_is_refused_with_the_largest_allowed() -> None:
    user_error_line(cli_in_process("run", *FAST, "--batch-size", "600"), "--batch-size", "use at most 256")


def test_summary_json_into_a_missing_folder_fails_before_training(tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "folder" / "summary.json"
    user_error_line(cli_in_process("run", *FAST, "--summary-json", str(target)), "--summary-json", str(target))


# --- runs that work -----------------------------------------------------------------------------------


def test_run_writes_a_summary_json_with_every_field(tmp_path: Path) -> None:
    target = tmp_path / "summary.json"
    result = cli_in_process("run", *FAST, "--batch-size", "32", "--max-steps", "5", "--summary-json", str(target))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    summary = json.loads(target.read_text(encoding="utf-8"))
    assert SUMMARY_KEYS <= set(summary)
    assert summary["status"] == "completed"
    assert summary["steps"] == 5 and summary["samples"] == 5 * 32
    assert summary["device"] == "cpu" and summary["device_name"]
    assert summary["wall_s"] > 0 and summary["samples_per_s"] > 0
    assert summary["loss_first"] > 0 and summary["loss_last"] > 0
    assert 0.0 <= summary["val_accuracy"] <= 1.0
    assert summary["peak_rss_bytes"] > 0 and summary["peak_allocated_bytes"] > 0
    assert summary["peak_reserved_bytes"] == 0  # the CPU has no caching allocator
    assert summary["config"]["batch_size"] == 32 and summary["config"]["model"] == "tiny-cnn"
    assert RunConfig.from_dict(summary["config"]).max_steps == 5  # the config can be run again
    assert "status      completed" in result.stdout
    assert "steps       5" in result.stdout


def test_devices_json_lists_the_cpu_with_its_capacity(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["devices", "--json"]) == 0
    devices = json.loads(capsys.readouterr().out)
    cpu = devices[0]
    assert cpu["spec"] == "cpu" and cpu["kind"] == "cpu" and cpu["name"]
    assert cpu["capacity_bytes"] > 2**28
    assert 0 < cpu["free_bytes"] <= cpu["capacity_bytes"]
    assert [d["spec"] for d in devices] == [d.spec for d in list_devices(query_free=False)]


def test_devices_table_has_one_row_per_device(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["devices"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["device", "kind", "capacity"]
    assert lines[1].startswith("cpu")
    assert len(lines) == 1 + len(list_devices(query_free=False))


def test_models_lists_ours_first_then_torchvision_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    names = capsys.readouterr().out.split()
    assert names[:4] == ["auto", "tiny-cnn", "resnet18", "speedrun-net"]
    assert "resnet50" in names and "mobilenet_v3_small" in names
    assert names.count("resnet18") == 1


def test_no_command_prints_help_and_exits_2() -> None:
    result = cli()
    assert result.returncode == 2
    assert "run" in result.stdout and "devices" in result.stdout and "models" in result.stdout


# --- the parser reads the bounds table ----------------------------------------------------------------


def test_every_config_field_is_an_option_with_its_range_in_the_help() -> None:
    run_help = cli("run", "--help").stdout
    for field in BOUNDS:
        assert option_name(field) in run_help, field
    assert "an integer from 1 to 65536" in run_help


def test_options_become_a_config_and_unset_ones_keep_the_defaults() -> None:
    args = build_parser().parse_args(
        [
            "run",
            "--batch-size",
            "16",
            "--lr",
            "0.001",
            "--optimizer",
            "adamw",
            "--channels-last",
            "--no-pin-memory",
            "--max-steps",
            "7",
        ]
    )
    config = config_from_args(args)
    assert config == RunConfig(
        batch_size=16, lr=0.001, optimizer="adamw", channels_last=True, pin_memory=False, max_steps=7
    )
    assert config_from_args(build_parser().parse_args(["run"])) == RunConfig()


# --- find-batch-size options come from FINDER_BOUNDS --------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--max-batch", "0"], "--max-batch: must be an integer from 1 to 65536, got 0"),
        # a larger answer would be a batch size that `run` refuses
        (["--max-batch", "1000000000"], "--max-batch: must be an integer from 1 to 65536, got 1000000000"),
        (["--margin", "0.995"], "--margin: must be a number from 0 to 0.99, got 0.995"),
        (
            ["--start", "64", "--max-batch", "32"],
            "--start: must be an integer from 1 to the largest batch (32), got 64",
        ),
    ],
)
def test_find_batch_size_search_options_name_themselves_before_searching(
    capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    code = main(["find-batch-size", *FAST, *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.splitlines() == [f"gpu-train-monitor: error: {expected}"]  # no "searching" line before it


def test_find_batch_size_help_shows_the_finder_ranges_and_defaults() -> None:
    text = " ".join(cli("find-batch-size", "--help").stdout.split())
    assert "fraction of the capacity kept free (a number from 0 to 0.99; default: 0.1)" in text
    assert "largest batch size tried (an integer from 1 to 65536; default: 65536)" in text
    assert "first batch size tried (an integer from 1 to 65536; default: 1)" in text
    assert "143 stopped by SIGTERM" in text


# --- configuration errors name the option from the error's field, not its text -------------------------


class FailingSession:
    """A TrainingSession stand-in whose run ends with a configuration error the session reported."""

    error_field: str | None = None
    message = ""

    def __init__(
        self, config: RunConfig, observers: list, snapshot_path: str | None = None, **checkpoint_options: object
    ) -> None:
        self.observers = list(observers)

    def request_stop(self) -> None:
        pass

    def run(self) -> object:
        summary = type("Summary", (), {"to_dict": lambda self: {}})()
        return type(
            "Finished",
            (),
            {
                "status": "failed",
                "user_error": True,
                "message": self.message,
                "error_field": self.error_field,
                "summary": summary,
                "step": 0,
            },
        )()


@pytest.mark.parametrize(
    ("field", "message", "expected"),
    [
        (
            "batch_size",
            "batch_size: 600 is larger than the training set",
            "--batch-size: 600 is larger than the training set",
        ),
        ("device", "no prefix here", "--device: no prefix here"),  # the field, not a guess from the text
        (None, "data_dir: looks like a field but is not one", "data_dir: looks like a field but is not one"),
    ],
)
def test_a_sessions_config_error_is_shown_as_the_option_its_field_names(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], field: str | None, message: str, expected: str
) -> None:
    monkeypatch.setattr(FailingSession, "error_field", field)
    monkeypatch.setattr(FailingSession, "message", message)
    monkeypatch.setattr("gpu_train_monitor.engine.session.TrainingSession", FailingSession)
    code = main(["run", *FAST])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.splitlines() == [f"gpu-train-monitor: error: {expected}"]


def test_an_indexed_cpu_is_refused_naming_the_option() -> None:
    user_error_line(
        cli_in_process("run", *FAST, "--device", "cpu:1"),
        "--device: cpu:1 does not exist: the CPU is one device (use cpu)",
    )


def test_an_upper_case_device_is_the_same_device() -> None:
    result = cli_in_process("run", *FAST, "--device", "CPU", "--batch-size", "32", "--max-steps", "1")
    assert result.returncode == 0, result.stderr
    assert "device      cpu (" in result.stdout


# --- options that would do nothing are refused, not ignored --------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["run", *FAST, "--sync-bn"],
            "--sync-bn: synchronises BatchNorm over the processes of a data-parallel run, "
            "and this run is one process; add --nproc N (2 or more) or leave --sync-bn out",
        ),
        (["run", *FAST, "--sync-bn", "--nproc", "1"], "--sync-bn: synchronises BatchNorm"),
        (
            ["compare", *FAST, "--sync-bn", "--vs", "placement=stream", "--vs", "placement=resident"],
            "--sync-bn: synchronises BatchNorm over the processes of a data-parallel run, and every configuration "
            "here is one process; give a --vs nproc=N (2 or more) or leave --sync-bn out",
        ),
        (
            ["find-batch-size", *FAST, "--nproc", "2"],
            "--nproc: find-batch-size measures one process on one device; leave --nproc out",
        ),
        (
            ["find-batch-size", *FAST, "--sync-bn"],
            "--sync-bn: find-batch-size measures one process on one device; leave --sync-bn out",
        ),
    ],
)
def test_an_option_that_would_do_nothing_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert err.startswith(f"gpu-train-monitor: error: {expected}"), err


def test_a_data_dir_name_longer_than_a_file_system_allows_names_the_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """It was exit 1 "File name too long" from the dataset reader, after the run had started."""
    long_dir = tmp_path / ("d" * 300) / "cifar"
    result = cli_in_process("run", *FAST, "--dataset", "cifar10", "--data-dir", str(long_dir))
    user_error_line(
        result, f"--data-dir: the folder name {'d' * 16}... in it is 300 bytes long; file systems allow at most 255"
    )


def test_a_run_with_stdout_closed_from_the_start_is_one_line_and_exit_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run ... >&-` (sys.stdout is None) ended in an AttributeError traceback after the run."""
    monkeypatch.setattr(sys, "stdout", None)
    code = main(["run", *FAST, "--batch-size", "32", "--max-steps", "1", "--no-record"])
    result = subprocess.CompletedProcess([], code, "", capsys.readouterr().err)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.splitlines()[-1] == "gpu-train-monitor: error: cannot write to stdout (Bad file descriptor)"


def test_version_says_the_apps_torchs_and_pythons_versions(capsys: pytest.CaptureFixture[str]) -> None:
    import platform

    import gpu_train_monitor

    assert main(["--version"]) == 0
    expected = f"gpu-train-monitor {gpu_train_monitor.__version__} (torch {torch.__version__.split('+')[0]}, Python "
    line = capsys.readouterr().out
    assert line.startswith(expected) and line == f"{expected}{platform.python_version()})\n"
