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
from pathlib import Path
from typing import Any

import pytest

import gpu_train_monitor.finder.search
from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.base.outputs import check_output_path, same_file, strict_json, write_json, write_text
from gpu_train_monitor.cli.main import main
from gpu_train_monitor.cli.stdout import save_json
from gpu_train_monitor.events.summary import RunSummary
from tests.support.cli import cli_in_process

FAST = ["--device", "cpu", "--model", "tiny-cnn", "--synthetic-samples", "256", "--batch-size", "32"]
UNWRITABLE = "/proc/gpu-train-monitor-summary.json"
FULL_DISK = "/dev/full"
needs_dev_full = pytest.mark.skipif(not os.path.exists(FULL_DISK), reason="needs Linux's /dev/full")


def one_error_line(result: subprocess.CompletedProcess[str], *expected: str) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    for fragment in expected:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


# --- checked before any work ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [("{tmp}", "is a folder"), ("{tmp}/missing/out.json", "does not exist"), (UNWRITABLE, "cannot write")],
)
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


@pytest.mark.parametrize(
    ("command", "option"),
    [
        (["run", *FAST, "--max-steps", "2"], "--summary-json"),
        (["run", *FAST, "--max-steps", "2"], "--memory-snapshot"),
        (["find-batch-size", *FAST], "--json"),
    ],
)
@pytest.mark.parametrize("where", ["folder", "unwritable"])
def test_cli_refuses_a_bad_output_path_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], option: str, where: str
) -> None:
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
    summary = RunSummary(
        status="diverged",
        steps=3,
        samples=96,
        wall_s=1.0,
        samples_per_s=math.inf,
        loss_first=2.3,
        loss_last=math.nan,
        val_accuracy=None,
        device="cpu",
        device_name="CPU",
        peak_allocated_bytes=1,
        peak_reserved_bytes=0,
        peak_rss_bytes=1,
        config={"lr": 10.0},
        memory_breakdown=None,
    )
    target = tmp_path / "summary.json"
    assert save_json("summary_json", str(target), summary.to_dict(), "summary") is None  # --summary-json's path
    text = target.read_text(encoding="utf-8")
    loaded = json.loads(text, parse_constant=_reject_constants)  # NaN/Infinity would raise here
    assert loaded["loss_last"] is None and loaded["samples_per_s"] is None
    assert loaded["loss_first"] == 2.3 and loaded["status"] == "diverged"


@pytest.mark.parametrize("failing", ["write", "fsync", "replace"])
def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
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
    result = cli_in_process("run", *FAST, "--max-steps", "2", "--summary-json", FULL_DISK)
    assert "Traceback" not in result.stderr
    assert result.returncode == 2, result.stderr  # documented: a result file that could not be saved
    assert "status      completed" in result.stdout
    last = result.stderr.strip().splitlines()[-1]
    assert last == (
        f"gpu-train-monitor: error: --summary-json: could not save to {FULL_DISK} "
        "(No space left on device); the summary is on stdout"
    )


def _quick_finder(real: Any) -> Any:
    """find_batch_size with a known memory model instead of real trials (each is a fresh process)."""

    def search(config: Any, **options: Any) -> Any:
        def measure(config: Any, batch: int, steps: int) -> int | None:
            peak = 1000 + 10 * batch
            return None if peak > 10_000 else peak

        return real(config, **{**options, "capacity": 10_000, "measure": measure})

    return search


@pytest.mark.parametrize("where", ["full disk", "replaced by a folder"])
def test_find_batch_size_result_survives_a_json_path_that_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    monkeypatch.setattr(
        gpu_train_monitor.finder.search,
        "find_batch_size",
        _quick_finder(gpu_train_monitor.finder.search.find_batch_size),
    )
    target = tmp_path / "result.json"
    if where == "full disk":

        def full(*args: object, **kwargs: object) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(os, "fsync", full)
        reason = "No space left on device"
    else:  # the path was fine when checked and became a folder during the search
        real_find = gpu_train_monitor.finder.search.find_batch_size

        def then_a_folder(*args: Any, **kwargs: Any) -> Any:
            result = real_find(*args, **kwargs)
            target.mkdir()
            return result

        monkeypatch.setattr(gpu_train_monitor.finder.search, "find_batch_size", then_a_folder)
        reason = "Is a directory"
    code = main(["find-batch-size", "--device", "cpu", "--model", "tiny-cnn", "--json", str(target)])
    out, err = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in err
    assert "batch size      " in out  # the answer is not lost
    assert err.strip().splitlines()[-1] == (
        f"gpu-train-monitor: error: --json: could not save to {target} ({reason}); the result is on stdout"
    )
    assert not target.is_file()


# --- an output never replaces the store, the checkpoint being resumed, a data or code file, another output ---


@pytest.fixture(scope="module")
def recorded_with_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a run store holding one run, that run's checkpoint), made once by a 2-step run in this process."""
    folder = tmp_path_factory.mktemp("recorded")
    store = folder / "v.db"
    assert (
        main(["run", *FAST, "--max-steps", "2", "--runs-db", str(store), "--checkpoint-dir", str(folder / "ck")]) == 0
    )
    (checkpoint,) = (folder / "ck").glob("*/step-2.pt")
    return store, checkpoint


@pytest.fixture
def store_copy(recorded_with_checkpoint: tuple[Path, Path], tmp_path: Path) -> Path:
    """A copy of the recorded store in a folder of the test's own (its -wal too when SQLite left one)."""
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{recorded_with_checkpoint[0]}{suffix}")
        if source.exists():
            Path(f"{tmp_path / 'v.db'}{suffix}").write_bytes(source.read_bytes())
    return tmp_path / "v.db"


def refused_untouched(capsys: pytest.CaptureFixture[str], argv: list[str], kept: Path, *expected: str) -> str:
    """main(argv) exits 2 with one line naming every `expected` fragment, and `kept` is byte for byte as it was."""
    before = kept.read_bytes()
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert code == 2, (code, err)
    assert err.splitlines() == [err.strip()] and err.startswith("gpu-train-monitor: error: "), err
    for fragment in expected:
        assert fragment in err, (fragment, err)
    assert "status" not in out and "training" not in err  # no run trained
    assert kept.read_bytes() == before
    return err


def spelling(kind: str, target: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Another way to name `target`: relative, through `..`, a symbolic link, a hard link."""
    if kind == "relative":
        monkeypatch.chdir(target.parent)
        return target.name
    if kind == "dotdot":
        (tmp_path / "sub").mkdir()
        return str(tmp_path / "sub" / ".." / target.name)
    other = tmp_path / f"other-{kind}"
    if kind == "symlink":
        other.symlink_to(target)
    else:
        os.link(target, other)
    return str(other)


SPELLINGS = ["same", "relative", "dotdot", "symlink", "hardlink"]


@pytest.mark.parametrize("kind", [*SPELLINGS, "missing"])
def test_same_file_sees_through_every_spelling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    target = tmp_path / "v.db"
    if kind != "missing":
        target.write_bytes(b"x")
    shown = str(target) if kind in ("same", "missing") else spelling(kind, target, tmp_path, monkeypatch)
    assert same_file(shown, target)
    (tmp_path / "else.db").write_bytes(b"x")
    assert not same_file(shown, tmp_path / "else.db")


@pytest.mark.parametrize("kind", SPELLINGS)
def test_run_refuses_a_summary_json_that_is_the_store(
    capsys: pytest.CaptureFixture[str], store_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    shown = str(store_copy) if kind == "same" else spelling(kind, store_copy, tmp_path, monkeypatch)
    refused_untouched(
        capsys,
        ["run", *FAST, "--max-steps", "2", "--runs-db", str(store_copy), "--summary-json", shown],
        store_copy,
        f"--summary-json: {shown} is the same file as --runs-db",
    )


def test_run_refuses_an_output_that_is_a_file_of_the_store(
    capsys: pytest.CaptureFixture[str], store_copy: Path
) -> None:
    wal = Path(f"{store_copy}-wal")
    wal.write_bytes(wal.read_bytes() if wal.exists() else b"")
    refused_untouched(
        capsys,
        ["run", *FAST, "--max-steps", "2", "--runs-db", str(store_copy), "--memory-snapshot", str(wal)],
        store_copy,
        f"--memory-snapshot: {wal} is a file of --runs-db (the run store)",
    )


def test_a_new_store_is_protected_before_it_exists(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    store = tmp_path / "new.db"
    code = main(["run", *FAST, "--max-steps", "2", "--runs-db", str(store), "--summary-json", str(store)])
    assert code == 2 and "is the same file as --runs-db" in capsys.readouterr().err
    assert not store.exists()


def test_the_default_store_is_protected_too(
    capsys: pytest.CaptureFixture[str], store_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUNS_DB", str(store_copy))
    refused_untouched(
        capsys,
        ["run", *FAST, "--max-steps", "2", "--summary-json", str(store_copy)],
        store_copy,
        f"--summary-json: {store_copy} is the run store; give another path",
    )


def test_without_recording_the_store_is_not_an_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "v.db"
    assert (
        main(
            [
                "run",
                *FAST,
                "--max-steps",
                "1",
                "--no-record",
                "--runs-db",
                str(target),
                "--summary-json",
                str(target),
                "--checkpoint-dir",
                str(tmp_path / "ck"),
            ]
        )
        == 0
    )
    assert json.loads(target.read_text())["steps"] == 1


def test_resume_refuses_a_summary_json_that_is_the_checkpoint(
    capsys: pytest.CaptureFixture[str], recorded_with_checkpoint: tuple[Path, Path], tmp_path: Path
) -> None:
    checkpoint = tmp_path / "ck.pt"
    checkpoint.write_bytes(recorded_with_checkpoint[1].read_bytes())
    refused_untouched(
        capsys,
        ["run", "--resume", str(checkpoint), "--max-steps", "4", "--no-record", "--summary-json", str(checkpoint)],
        checkpoint,
        f"--summary-json: {checkpoint} is the same file as --resume (the checkpoint being resumed)",
    )


def test_two_outputs_may_not_share_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    code = main(
        [
            "run",
            *FAST,
            "--max-steps",
            "1",
            "--no-record",
            "--summary-json",
            str(target),
            "--memory-snapshot",
            str(target),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.strip() == (
        f"gpu-train-monitor: error: --memory-snapshot: {target} is also given to "
        "--summary-json; give each output a file of its own"
    )
    assert not target.exists()


def test_an_output_may_not_replace_your_code_or_a_dataset_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code_file = tmp_path / "mynet.py"
    code_file.write_text("def make(num_classes): ...\n")
    refused_untouched(
        capsys,
        ["run", *FAST, "--model", f"{code_file}:make", "--no-record", "--summary-json", str(code_file)],
        code_file,
        "--summary-json: ",
        "--model (your model's code)",
    )
    images = tmp_path / "images"
    (images / "cat").mkdir(parents=True)
    picture = images / "cat" / "1.png"
    picture.write_bytes(b"\x89PNG not really")
    refused_untouched(
        capsys,
        ["find-batch-size", *FAST, "--dataset", "imagefolder", "--data-dir", str(images), "--json", str(picture)],
        picture,
        "--json: ",
        "is a file of --data-dir",
    )


def test_compare_refuses_a_json_that_is_the_store(capsys: pytest.CaptureFixture[str], store_copy: Path) -> None:
    refused_untouched(
        capsys,
        [
            "compare",
            *FAST,
            "--max-steps",
            "2",
            "--vs",
            "lr=0.1",
            "--vs",
            "lr=0.01",
            "--runs-db",
            str(store_copy),
            "--json",
            str(store_copy),
        ],
        store_copy,
        f"--json: {store_copy} is the same file as --runs-db (the run store)",
    )
    assert "comparing" not in capsys.readouterr().err


@pytest.mark.parametrize(("fmt", "out"), [("json", "{store}"), ("json", "{store}-shm"), ("csv", "{folder}")])
def test_runs_export_refuses_to_write_over_the_store(
    capsys: pytest.CaptureFixture[str], store_copy: Path, tmp_path: Path, fmt: str, out: str
) -> None:
    shm = Path(f"{store_copy}-shm")
    shm.exists() or shm.write_bytes(b"")
    if fmt == "csv":  # a store whose name is one the CSV export writes in that folder
        store_copy.rename(tmp_path / "run-1-steps.csv")
        store_copy = tmp_path / "run-1-steps.csv"
    target = out.format(store=store_copy, folder=tmp_path)
    line = refused_untouched(
        capsys,
        ["runs", "export", "1", "--format", fmt, "--out", target, "--runs-db", str(store_copy)],
        store_copy,
        "--out: ",
        "--runs-db (the run store)",
    )
    assert str(store_copy) in line or target in line
    assert main(["runs", "show", "1", "--runs-db", str(store_copy)]) == 0  # every run is still there
    assert "status" in capsys.readouterr().out


def test_export_run_names_the_store_without_an_option_for_the_window(store_copy: Path) -> None:
    from gpu_train_monitor.export.run_export import export_run
    from gpu_train_monitor.store.run_store import RunStore

    before = store_copy.read_bytes()
    with RunStore(store_copy, readonly=True) as store, pytest.raises(ConfigError) as info:
        export_run(store, 1, "json", str(store_copy))
    assert info.value.detail == f"{store_copy} is the run store; give another path"
    assert store_copy.read_bytes() == before
