"""`gpu-train-monitor runs list|show|export|delete` on a store holding real recorded runs.

Most commands run in this process through gpu_train_monitor.cli.main.main (the runs actions load no torch); the
confirmation prompt and a closed stdout use the real CLI in a subprocess (without torch: quick); a run still training in
another process is in tests/e2e/test_run_store_processes.py.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pty
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.cli.main import main
from gpu_train_monitor.cli.summary_text import step_time_lines
from gpu_train_monitor.events.events import STEP_PHASES
from gpu_train_monitor.events.summary import RunSummary
from gpu_train_monitor.export.run_export import local_time
from gpu_train_monitor.store.run_store import RunStore
from gpu_train_monitor.watch import watch
from tests.support.recorded_runs import another_programs_database, record_resumed_nan_run, record_run
from tests.support.watched_loops import tiny_model, train

ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
PREFIX = "gpu-train-monitor: error: "


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run 1: a real tiny-cnn run (12 steps, 2 epochs); run 2: resumed, diverged (see test_run_export)."""
    path = tmp_path_factory.mktemp("store") / "runs.sqlite3"
    _, events = record_run(path, max_steps=12, epochs=2)
    record_resumed_nan_run(path, events)
    return path


@pytest.fixture()
def own_store(store_path: Path, tmp_path: Path) -> Path:
    """A copy of the module's store that a test may change (SQLite's backup: a consistent copy)."""
    copy = tmp_path / "copy.sqlite3"
    with sqlite3.connect(store_path) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    source.close()
    target.close()
    return copy


def runs(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["runs", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error_line(code: int, err: str) -> str:
    """The message of a one-line error with exit code 2 (no traceback, no usage block)."""
    assert code == 2 and err.count("\n") == 1 and err.startswith(PREFIX) and "Traceback" not in err, err
    return err[len(PREFIX) :].strip()


def test_list_prints_a_table_of_the_runs_newest_first(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    code, out, err = runs(capsys, "list", "--runs-db", str(store_path))
    assert code == 0 and err == ""
    header, *lines = out.splitlines()
    assert header.split("  ")[0] == "id" and " speed " in header and header.endswith("peak memory  name")
    assert [line.split()[0] for line in lines] == ["2", "1"]
    with RunStore(store_path) as store:
        run = store.run(1)
    expected = [
        str(run.id),
        local_time(run.started_at),
        "completed",
        "tiny-cnn",
        "synthetic",
        "cpu",
        "12",
        f"{run.samples_per_s:,.0f} img/s",  # an image run's speed is images/s; a text run's tok/s
        f"{run.loss_last:.4f}",
        format_bytes(run.peak_allocated_bytes),
    ]
    assert lines[1].split() == " ".join(expected).split()
    assert "diverged" in lines[0]


def test_list_as_json_and_searched(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    code, out, _ = runs(capsys, "list", "--json", "--runs-db", str(store_path))
    listed = json.loads(out)
    assert code == 0 and [run["id"] for run in listed] == [2, 1]
    assert listed[1]["status"] == "completed" and listed[1]["started"].startswith(
        local_time(listed[1]["started_at"])[:10]
    )
    code, out, _ = runs(capsys, "list", "--search", "diverged", "--runs-db", str(store_path))
    assert code == 0 and [line.split()[0] for line in out.splitlines()[1:]] == ["2"]
    code, out, _ = runs(capsys, "list", "--search", "resnet", "--runs-db", str(store_path))
    assert (code, out.strip()) == (0, f"no runs match 'resnet' in {store_path}")


def test_search_words_are_literal_and_every_word_must_match_as_in_the_window(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    """One rule with the Runs tab (gpu_train_monitor.store.search): `%` and `_` are characters, not SQL LIKE
    wildcards."""

    def listed(search: str) -> list[str]:
        code, out, _ = runs(capsys, "list", "--search", search, "--runs-db", str(store_path))
        assert code == 0
        return [] if out.startswith("no runs match") else [line.split()[0] for line in out.splitlines()[1:]]

    assert listed("%") == listed("_") == listed("tiny%cnn") == []
    assert listed("TINY-cnn diverged") == ["2"]  # every word, any case, each in some field
    assert listed("tiny-cnn") == ["2", "1"] and listed("tiny-cnn resnet") == []
    assert listed("#1") == ["1"]


def test_another_programs_database_is_refused_and_left_byte_for_byte(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "f.db"
    digest = another_programs_database(path)  # user_version 1 and a table named runs
    code, _, err = runs(capsys, "list", "--runs-db", str(path))
    assert one_error_line(code, err) == (
        f"{path} is not a run store: it is an SQLite database of another program (it "
        "is neither empty nor marked as a run store); give --runs-db a new file name"
    )
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert [p.name for p in tmp_path.iterdir()] == ["f.db"]


def test_without_a_store_list_says_there_are_no_runs_yet_and_where_and_the_others_refuse(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "none.sqlite3"
    code, out, _ = runs(capsys, "list", "--runs-db", str(missing))
    assert code == 0 and out.startswith(f"no runs yet: the run store {missing} does not exist")
    assert runs(capsys, "list", "--json", "--runs-db", str(missing))[:2] == (0, "[]\n")
    code, _, err = runs(capsys, "show", "1", "--runs-db", str(missing))
    assert one_error_line(code, err) == f"no run store at {missing}: no runs have been recorded there yet"
    assert not missing.exists()  # looking did not create one


def test_show_prints_what_people_want_to_know_about_a_run(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    code, out, err = runs(capsys, "show", "1", "--runs-db", str(store_path))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "run 1" and "  status      completed" in lines
    assert "  model       tiny-cnn (" in out and "  steps       12 of 12" in lines
    assert "configuration" in lines and any(re.fullmatch(r"  synthetic_samples +256", line) for line in lines)
    assert any(re.fullmatch(r"  activation_checkpointing +false", line) for line in lines)  # key and value apart
    assert "  device      cpu (" in out and ", resident placement" in out
    assert "(the folder of its checkpoints)" in out
    breakdown = lines.index(next(line for line in lines if line.startswith("memory breakdown (step ")))
    assert lines[breakdown + 1].split() == ["measured"]  # a run of ours records no prediction
    assert [line.split()[0] for line in lines[breakdown + 2 : breakdown + 8]] == [
        "parameters",
        "gradients",
        "optimizer",
        "batch",
        "activations",
        "total",
    ]
    epochs = [line for line in lines if line.startswith("  epoch ")]
    assert len(epochs) == 2 and "val loss" in epochs[0] and "val acc" in epochs[0] and "epochs (2)" in lines
    code, out, _ = runs(capsys, "show", "#2", "--runs-db", str(store_path))
    assert code == 0 and "  status      diverged: the loss is inf at step 5" in out.splitlines()
    assert "resumed 1 time(s)" in out


def test_show_tells_where_a_steps_time_went_and_the_verdict_as_the_runs_summary_did(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    with RunStore(store_path, readonly=True) as store:
        stored = store.summary(1) or {}
    summary = RunSummary(**{key: value for key, value in stored.items() if key in RunSummary.__annotations__})
    assert summary.step_phases_s and summary.verdict in ("input-bound", "compute-bound")
    code, out, err = runs(capsys, "show", "1", "--runs-db", str(store_path))
    lines = out.splitlines()
    assert code == 0 and err == ""
    step_time = [line for line in lines if line.startswith("  step time   ")]
    verdict = [line for line in lines if line.startswith("  verdict     ")]
    assert len(step_time) == len(verdict) == 1 and " ms: data " in step_time[0] and "recording" in step_time[0]
    assert [line[2:] for line in (*step_time, *verdict)] == step_time_lines(summary)  # the summary's own words
    assert lines.index(step_time[0]) == lines.index(next(line for line in lines if line.startswith("  process"))) - 2
    code, out, _ = runs(capsys, "show", "1", "--json", "--runs-db", str(store_path))
    stored = json.loads(out)["summary"]
    assert code == 0 and list(stored["step_phases_s"]) == [*STEP_PHASES, "step"]
    assert (stored["verdict"], stored["verdict_text"]) == (summary.verdict, summary.verdict_text) and stored[
        "verdict_text"
    ]


def test_show_tells_a_watched_run_as_it_ran_with_its_breakdown_and_prediction(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "runs.sqlite3"
    model, optimizer = tiny_model()
    with watch(model, optimizer, runs_db=db, report_interval_s=0.01) as w:
        train(model, optimizer, 5, w.step)
    code, out, err = runs(capsys, "show", "1", "--runs-db", str(db))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert "  steps       5" in lines  # no "of 0": the loop gave no total
    assert "  device      cpu (" in out and "placement" not in out  # no placement of ours
    assert "checkpoints" not in out and "samples/s" in out
    # the loop's steps timed in phases by hooks on its model and optimizer, as a run of ours is
    assert "  step time   " in out and "forward" in out and "  verdict     " in out
    breakdown = lines.index(next(line for line in lines if line.startswith("memory breakdown (step ")))
    assert lines[breakdown + 1].split() == ["measured", "predicted"]
    measured, predicted = lines[breakdown + 2].split()[1:3], lines[breakdown + 2].split()[3:5]
    assert lines[breakdown + 2].startswith("  parameters") and measured == predicted  # the same weights
    assert lines[breakdown + 8].startswith("  predicted at step 1, ") and "% off: Sequential at batch 16" in out


def test_show_by_module_tells_a_watched_runs_measured_and_predicted_step_by_module(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpu_train_monitor.engine.report
    import gpu_train_monitor.memory.measured_modules

    monkeypatch.setattr(gpu_train_monitor.engine.report, "BREAKDOWN_PERIOD_S", 0.0)
    monkeypatch.setattr(gpu_train_monitor.memory.measured_modules, "ATTRIBUTION_PERIOD_S", 0.0)
    db = tmp_path / "runs.sqlite3"
    model, optimizer = tiny_model()
    with watch(model, optimizer, runs_db=db, report_interval_s=0.0) as w:  # a report and a breakdown every step
        train(model, optimizer, 8, w.step)
    code, out, err = runs(capsys, "show", "1", "--runs-db", str(db), "--by-module")
    assert code == 0 and err == ""
    lines = out.splitlines()
    for title in ("memory by module (measured at step ", "memory by module (predicted at step 1)"):
        start = lines.index(next(line for line in lines if line.startswith(title)))
        names = [line.split()[0] for line in lines[start + 2 : start + 7]]
        assert names == ["0", "1", "2", "(outside", "total"], lines[start : start + 7]
    code, out, _ = runs(capsys, "show", "1", "--runs-db", str(db), "--by-module", "--json")
    found = json.loads(out)["by_module"]
    for key in ("measured", "predicted"):
        rows = found[key]["modules"]
        assert [row["name"] for row in rows] == ["0", "1", "2", "(outside modules)"]
        parts = ("activations_bytes", "params_bytes", "grads_bytes", "optimizer_bytes", "temporaries_bytes")
        assert sum(row[p] for row in rows for p in parts) == found[key]["total_bytes"] > 0
        assert rows[0]["params_bytes"] == (12 * 32 + 32) * 4


def test_show_tells_an_out_of_memory_with_the_modules_that_held_the_most(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    import gpu_train_monitor.engine.report
    import gpu_train_monitor.memory.measured_modules

    monkeypatch.setattr(gpu_train_monitor.engine.report, "BREAKDOWN_PERIOD_S", 0.0)
    monkeypatch.setattr(gpu_train_monitor.memory.measured_modules, "ATTRIBUTION_PERIOD_S", 0.0)
    db = tmp_path / "runs.sqlite3"
    model, optimizer = tiny_model()
    error = torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB.")
    with pytest.raises(torch.OutOfMemoryError):  # not predicted: the holders are what a split step measured
        with watch(model, optimizer, runs_db=db, report_interval_s=0.0, predict=False) as w:
            train(model, optimizer, 8, w.step, fail_at=6, error=error)
    code, out, err = runs(capsys, "show", "1", "--runs-db", str(db))
    assert code == 0 and err == ""
    line = next(line for line in out.splitlines() if line.startswith("  step 6 (train): batch 16, stopped: "))
    found = re.search(r"; largest holders by module \(measured at step (\d)\): 0 [\d.]+ kB \((\d+)%\), ", line)
    assert found and 1 <= int(found[1]) <= 5 and line.count("%)") == 3, line  # the Sequential's three layers
    assert "predicted to fit" not in line  # nothing was predicted
    code, out, _ = runs(capsys, "show", "1", "--runs-db", str(db), "--json")
    (oom,) = json.loads(out)["out_of_memory"]
    assert oom["holders_source"] == "measured" and [row["name"] for row in oom["holders"]] == ["0", "1", "2"]
    assert oom["fits_batch"] is None


def test_show_by_module_of_a_run_without_says_so(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    code, out, _ = runs(capsys, "show", "2", "--runs-db", str(store_path), "--by-module")
    assert code == 0 and "memory by module: none recorded" in out


def test_show_as_json_is_the_record_without_the_series(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    code, out, _ = runs(capsys, "show", "1", "--json", "--runs-db", str(store_path))
    document = json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} in strict JSON"))
    assert code == 0 and document["run"]["id"] == 1 and len(document["epochs"]) == 2
    assert "steps" not in document and "reports" not in document


def test_export_prints_the_files_it_wrote(capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path) -> None:
    code, out, err = runs(
        capsys, "export", "1", "--format", "csv", "--out", str(tmp_path / "csv"), "--runs-db", str(store_path)
    )
    assert code == 0 and err == ""
    assert out.splitlines() == [str(tmp_path / "csv" / "run-1-steps.csv"), str(tmp_path / "csv" / "run-1-memory.csv")]
    code, out, err = runs(
        capsys,
        "export",
        "1",
        "--format",
        "tensorboard",
        "--out",
        str(tmp_path / "tb"),
        "--smoothing",
        "0.5",
        "--runs-db",
        str(store_path),
    )
    assert code == 0 and Path(out.strip()).parent == tmp_path / "tb" / "run-1"
    assert err == f"view it with: tensorboard --logdir {tmp_path / 'tb'}\n"
    code, out, _ = runs(
        capsys, "export", "2", "--format", "json", "--out", str(tmp_path / "two.json"), "--runs-db", str(store_path)
    )
    assert code == 0 and json.loads((tmp_path / "two.json").read_text())["run"]["id"] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "999"], "no run 999 in {store}"),
        (["export", "999", "--format", "csv", "--out", "{tmp}"], "no run 999 in {store}"),
        (["delete", "999", "--yes"], "no run 999 in {store}"),
        (
            ["show", "abc"],
            "runs show: error: argument ID: 'abc' is not a run id: give the number `gpu-train-monitor runs list` shows",
        ),
        (
            ["export", "1", "--format", "xlsx", "--out", "{tmp}"],
            "runs export: error: argument --format: invalid choice",
        ),
        (["export", "1", "--format", "csv"], "runs export: error: the following arguments are required: --out"),
        (
            ["export", "1", "--format", "csv", "--out", "{tmp}", "--smoothing", "2"],
            "smoothing must be between 0 and 0.999 (the loss plot's range), not 2",
        ),
        (
            ["export", "1", "--format", "csv", "--out", "{store}"],
            "{store} is a file, but the CSV export folder must be a folder",
        ),
        ([], "runs: error: the following arguments are required: ACTION"),
    ],
)
def test_mistakes_are_one_line_and_exit_code_2(
    capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    filled = [arg.format(store=store_path, tmp=tmp_path) for arg in args]
    code = main(["runs", *filled, *(["--runs-db", str(store_path)] if args else [])])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert message.format(store=store_path) in err


def test_a_damaged_store_is_one_line_naming_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.sqlite3"
    damaged.write_bytes(b"this is not a database" * 100)
    code, _, err = runs(capsys, "list", "--runs-db", str(damaged))
    assert f"the run store {damaged} is damaged" in one_error_line(code, err)


def test_delete_needs_a_yes_without_a_terminal(
    capsys: pytest.CaptureFixture[str], own_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))  # piped input is no confirmation
    code, _, err = runs(capsys, "delete", "1", "--runs-db", str(own_store))
    assert one_error_line(code, err) == "not deleting run 1 without confirmation: stdin is not a terminal; add --yes"
    code, out, _ = runs(capsys, "delete", "1", "--yes", "--runs-db", str(own_store))
    assert (code, out) == (0, f"deleted run 1 from {own_store}\n")
    with RunStore(own_store) as store:
        assert [run.id for run in store.list_runs()] == [2]
        assert store.steps(1).steps == () and store.reports(1) == [] and store.events(1) == []


def delete_at_a_terminal(store: Path, answer: bytes) -> subprocess.CompletedProcess[str]:
    """`runs delete 1` with a terminal as stdin, answering its question with `answer`."""
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "gpu_train_monitor", "runs", "delete", "1", "--runs-db", str(store)],
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        os.write(leader, answer)
        out, err = process.communicate(timeout=120)
    finally:
        os.close(follower)
        os.close(leader)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_delete_at_a_terminal_asks_first(own_store: Path) -> None:
    declined = delete_at_a_terminal(own_store, b"n\n")
    assert declined.returncode == 1 and declined.stdout == ""
    assert declined.stderr.startswith("delete run 1 (#1 tiny-cnn on cpu, completed, 12 steps, started ")
    assert declined.stderr.endswith("and everything recorded for it? [y/N] not deleted\n")
    with RunStore(own_store) as store:
        assert [run.id for run in store.list_runs()] == [2, 1]
    accepted = delete_at_a_terminal(own_store, b"y\n")
    assert accepted.returncode == 0 and accepted.stdout == f"deleted run 1 from {own_store}\n", accepted.stderr
    with RunStore(own_store) as store:
        assert [run.id for run in store.list_runs()] == [2]


def test_a_closed_stdout_ends_quietly(store_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "gpu_train_monitor", "runs", "show", "1", "--runs-db", str(store_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    process.stdout.close()  # the reader left before the first line (| head -0)
    err = process.stderr.read()
    process.stderr.close()
    assert process.wait(120) == 1 and err == ""


def test_the_apps_entry_point_hands_runs_to_the_cli(store_path: Path) -> None:
    """`gpu-train-monitor runs ...` starts at gpu_train_monitor.gui.app's main, which must not open the window for
    it."""
    code = (
        "import sys\nfrom gpu_train_monitor.gui.app import main\n"
        f"sys.exit(main(['runs', 'list', '--runs-db', {str(store_path)!r}]))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=ENV)
    assert result.returncode == 0 and result.stdout.splitlines()[0].startswith("id  started"), result.stderr


@pytest.mark.parametrize("args", [["show"], ["delete", "--yes"], ["export", "--format", "json", "--out", "x.json"]])
def test_a_run_id_beyond_sqlites_integers_is_no_such_run(
    capsys: pytest.CaptureFixture[str], store_path: Path, args: list[str]
) -> None:
    """It was an OverflowError traceback: SQLite's integers end at 2**63 - 1."""
    huge = "99999999999999999999999"
    code, out, err = runs(capsys, args[0], huge, *args[1:], "--runs-db", str(store_path))
    assert one_error_line(code, err) == f"no run {huge} in {store_path}" and out == ""


def test_stdout_closed_from_the_start_is_one_line_and_exit_1(
    capsys: pytest.CaptureFixture[str], store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`runs list >&-`: Python starts with sys.stdout None, where print() drops the text without a word."""
    monkeypatch.setattr(sys, "stdout", None)
    code, _, err = runs(capsys, "list", "--runs-db", str(store_path))
    assert (code, err) == (1, f"{PREFIX}cannot write to stdout (Bad file descriptor)\n")
