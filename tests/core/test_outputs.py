"""Result files (--summary-json, find-batch-size --json, --memory-snapshot): checked before any work,
written atomically, strict JSON; a full disk is reported with the result still on stdout.

Tests run as root, where permission bits stop nothing: an unwritable place is /proc (no file can be
created there, not even by root) and a full disk is /dev/full, whose every write fails with ENOSPC.
"""

from __future__ import annotations

import errno
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import core.batch_finder
from core.cli import main
from core.errors import ConfigError
from core.outputs import check_output_path, strict_json, write_json, write_text
from core.summary import RunSummary

FAST = ["--device", "cpu", "--model", "tiny-cnn", "--synthetic-samples", "256", "--batch-size", "32"]
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
UNWRITABLE = "/proc/gpu-train-monitor-summary.json"
FULL_DISK = "/dev/full"
needs_dev_full = pytest.mark.skipif(not os.path.exists(FULL_DISK), reason="needs Linux's /dev/full")


def cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "core", *args], capture_output=True, text=True, timeout=timeout,
                          env=ENV)


def one_error_line(result: subprocess.CompletedProcess[str], *expected: str) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    for fragment in expected:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


# --- checked before any work ----------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "expected"), [
    ("{tmp}", "is a folder"),
    ("{tmp}/missing/out.json", "does not exist"),
    (UNWRITABLE, "cannot write"),
])
def test_bad_output_paths_are_refused_naming_the_option(tmp_path: Path, path: str, expected: str) -> None:
    target = path.format(tmp=tmp_path)
    with pytest.raises(ConfigError) as info:
        check_output_path("summary_json", target)
    assert info.value.field == "summary_json"
    assert expected in str(info.value) and target in str(info.value)
    assert list(tmp_path.iterdir()) == []  # the probe left nothing behind


def test_writable_paths_and_devices_are_accepted(tmp_path: Path) -> None:
    check_output_path("json", tmp_path / "new.json")
    (tmp_path / "old.json").write_text("{}")
    check_output_path("json", tmp_path / "old.json")
    check_output_path("json", os.devnull)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.json"]


@pytest.mark.parametrize(("command", "option"), [
    (["run", *FAST, "--max-steps", "2"], "--summary-json"),
    (["run", *FAST, "--max-steps", "2"], "--memory-snapshot"),
    (["find-batch-size", *FAST], "--json"),
])
@pytest.mark.parametrize("where", ["folder", "unwritable"])
def test_cli_refuses_a_bad_output_path_before_training(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       command: list[str], option: str, where: str) -> None:
    target = str(tmp_path) if where == "folder" else UNWRITABLE
    code = main([*command, option, target])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.splitlines() == [err.strip()] and err.startswith(f"gpu-train-monitor: error: {option}: ")
    assert target in err
    assert "searching" not in err and "training" not in err  # no work was started


# --- strict JSON, atomic writes -------------------------------------------------------------------------


def test_non_finite_numbers_become_null_at_any_depth() -> None:
    value = {"a": math.nan, "b": [1.0, math.inf, {"c": -math.inf}], "d": (2, math.nan), "e": "nan", "f": 3}
    assert strict_json(value) == {"a": None, "b": [1.0, None, {"c": None}], "d": [2, None], "e": "nan", "f": 3}


def _reject_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def test_a_diverged_runs_summary_is_strict_json_with_nulls(tmp_path: Path) -> None:
    summary = RunSummary(status="diverged", steps=3, samples=96, wall_s=1.0, samples_per_s=math.inf,
                         loss_first=2.3, loss_last=math.nan, val_accuracy=None, device="cpu", device_name="CPU",
                         peak_allocated_bytes=1, peak_reserved_bytes=0, peak_rss_bytes=1, config={"lr": 10.0},
                         memory_breakdown=None)
    target = tmp_path / "summary.json"
    summary.write_json(target)
    text = target.read_text(encoding="utf-8")
    loaded = json.loads(text, parse_constant=_reject_constants)  # NaN/Infinity would raise here
    assert loaded["loss_last"] is None and loaded["samples_per_s"] is None
    assert loaded["loss_first"] == 2.3 and loaded["status"] == "diverged"


@pytest.mark.parametrize("failing", ["write", "fsync", "replace"])
def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    failing: str) -> None:
    target = tmp_path / "summary.json"
    target.write_text('{"old": true}\n')

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if failing == "write":
        monkeypatch.setattr(Path, "write_text", full)
    else:
        monkeypatch.setattr(os, failing, full)
    with pytest.raises(OSError, match="No space left"):
        write_json(target, {"new": True})
    assert target.read_text() == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_a_write_replaces_the_file_and_keeps_a_link_to_it(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]


@needs_dev_full
def test_a_full_disk_raises_instead_of_writing_nothing() -> None:
    check_output_path("summary_json", FULL_DISK)  # it opens for writing: the failure comes at the write
    with pytest.raises(OSError) as info:
        write_json(FULL_DISK, {"x": 1})
    assert info.value.errno == errno.ENOSPC


# --- a result that cannot be saved is still printed ------------------------------------------------------


@needs_dev_full
def test_run_summary_on_a_full_disk_is_printed_and_the_failure_named() -> None:
    result = cli("run", *FAST, "--max-steps", "2", "--summary-json", FULL_DISK)
    assert "Traceback" not in result.stderr
    assert result.returncode == 2, result.stderr  # documented: a result file that could not be saved
    assert "status      completed" in result.stdout
    last = result.stderr.strip().splitlines()[-1]
    assert last == (f"gpu-train-monitor: error: --summary-json: could not save to {FULL_DISK} "
                    "(No space left on device); the summary is on stdout")


def _quick_finder(real: Any) -> Any:
    """find_batch_size with a known memory model instead of real trials (each is a fresh process)."""
    def search(config: Any, **options: Any) -> Any:
        def measure(config: Any, batch: int, steps: int) -> int | None:
            peak = 1000 + 10 * batch
            return None if peak > 10_000 else peak

        return real(config, **{**options, "capacity": 10_000, "measure": measure})
    return search


@pytest.mark.parametrize("where", ["full disk", "replaced by a folder"])
def test_find_batch_size_result_survives_a_json_path_that_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    monkeypatch.setattr(core.batch_finder, "find_batch_size", _quick_finder(core.batch_finder.find_batch_size))
    target = tmp_path / "result.json"
    if where == "full disk":
        def full(*args: object, **kwargs: object) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        monkeypatch.setattr(os, "fsync", full)
        reason = "No space left on device"
    else:  # the path was fine when checked and became a folder during the search
        real_find = core.batch_finder.find_batch_size

        def then_a_folder(*args: Any, **kwargs: Any) -> Any:
            result = real_find(*args, **kwargs)
            target.mkdir()
            return result
        monkeypatch.setattr(core.batch_finder, "find_batch_size", then_a_folder)
        reason = "Is a directory"
    code = main(["find-batch-size", "--device", "cpu", "--model", "tiny-cnn", "--json", str(target)])
    out, err = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in err
    assert "batch size      " in out  # the answer is not lost
    assert err.strip().splitlines()[-1] == (f"gpu-train-monitor: error: --json: could not save to {target} "
                                            f"({reason}); the result is on stdout")
    assert not target.is_file()
