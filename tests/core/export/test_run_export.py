"""Run exports read back by the tools people use: the csv module with numpy, a strict JSON parser, and
TensorBoard's own event reader.

One real tiny-cnn run is trained and recorded per module. A second run is recorded by the real RunRecorder
from that run's own events, changed to hold what a short CPU run cannot produce on demand: a resume from
step 2, and non-finite losses (NaN at step 4, inf at step 5).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.export.csv_files import MEMORY_COLUMNS, STEP_COLUMNS
from gpu_train_monitor.export.run_export import export_run, run_document
from gpu_train_monitor.export.smoothing import EmaState, debiased_ema
from gpu_train_monitor.export.step_table import step_elapsed, step_table
from gpu_train_monitor.store.run_store import ReportRow, RunNotFound, RunStore
from tests.support.recorded_runs import record_resumed_nan_run, record_run


@dataclasses.dataclass(frozen=True)
class Recorded:
    path: Path
    run_id: int  # a real run: 12 steps over 2 epochs
    nan_id: int  # resumed at step 2, NaN and inf losses


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    path = tmp_path_factory.mktemp("store") / "runs.sqlite3"
    run_id, events = record_run(path, max_steps=12, epochs=2)
    return Recorded(path, run_id, record_resumed_nan_run(path, events))


@pytest.fixture()
def store(recorded: Recorded) -> RunStore:
    with RunStore(recorded.path) as opened:
        yield opened


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def column(rows: list[dict[str, str]], name: str) -> np.ndarray:
    """A CSV column as numpy reads numbers: an empty cell is NaN, 'nan' and 'inf' are themselves."""
    return np.array([float(row[name]) if row[name] != "" else np.nan for row in rows])


def test_csv_holds_every_step_and_every_report_of_the_run(store: RunStore, recorded: Recorded, tmp_path: Path) -> None:
    folder = tmp_path / "new" / "folder"  # created
    paths = export_run(store, recorded.run_id, "csv", folder)
    assert paths == [folder / f"run-{recorded.run_id}-steps.csv", folder / f"run-{recorded.run_id}-memory.csv"]
    header, rows = read_csv(paths[0])
    series, reports = store.steps(recorded.run_id), store.reports(recorded.run_id)
    assert header == list(STEP_COLUMNS)
    assert [int(row["step"]) for row in rows] == list(series.steps) == list(range(1, 13))
    assert [int(row["epoch"]) for row in rows] == list(series.epochs)
    assert column(rows, "loss").tolist() == list(series.losses)  # full precision: equal, not close
    expected_ema = debiased_ema(np.array(series.losses), 0.9, EmaState())
    assert column(rows, "smoothed_loss") == pytest.approx(expected_ema, rel=1e-12)
    elapsed = column(rows, "elapsed_s")
    assert np.all(np.isfinite(elapsed)) and np.all(np.diff(elapsed) >= 0)
    by_step = dict(zip(series.steps, elapsed))
    assert [by_step[r.step] for r in reports] == pytest.approx([r.elapsed_s for r in reports])

    header, rows = read_csv(paths[1])
    assert header == list(MEMORY_COLUMNS)
    assert [int(row["step"]) for row in rows] == [r.step for r in reports]
    for name in ("samples_per_s", "allocated_bytes", "peak_allocated_bytes", "capacity_bytes", "process_rss_bytes"):
        assert column(rows, name).tolist() == [float(getattr(r, name)) for r in reports]
    assert column(rows, "unix_time").tolist() == [r.at for r in reports]
    assert all(
        row["device_used_bytes"] == ("" if r.device_used_bytes is None else str(r.device_used_bytes))
        for row, r in zip(rows, reports)
    )


def test_csv_writes_a_non_finite_loss_as_nan_or_inf_and_a_time_it_cannot_know_as_an_empty_cell(
    store: RunStore, recorded: Recorded, tmp_path: Path
) -> None:
    steps_csv, _ = export_run(store, recorded.nan_id, "csv", tmp_path)
    _, rows = read_csv(steps_csv)
    assert [row["loss"] for row in rows] == ["2.0", "1.8", "1.5", "nan", "inf"]
    smoothed = column(rows, "smoothed_loss")
    assert np.all(np.isfinite(smoothed)) and smoothed[3] == smoothed[4] == smoothed[2]  # holds through NaN, inf
    # resumed at step 2: step 3 lies between the last report before the resume (2) and the first after (4)
    assert [row["elapsed_s"] == "" for row in rows] == [False, False, True, False, False]


def test_the_smoothed_loss_is_the_loss_plots_ema_at_the_smoothing_asked_for(
    store: RunStore, recorded: Recorded
) -> None:
    losses = np.array(store.steps(recorded.run_id).losses)
    raw = step_table(store, recorded.run_id, smoothing=0.0)
    assert raw.smoothed.tolist() == losses.tolist()
    heavy = step_table(store, recorded.run_id, smoothing=0.99)
    assert heavy.smoothed == pytest.approx(debiased_ema(losses, 0.99, EmaState()))
    assert not np.allclose(heavy.smoothed, raw.smoothed)


def strict_load(path: Path) -> dict:
    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in strict JSON")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def test_json_is_strict_and_holds_the_record_events_and_series(
    store: RunStore, recorded: Recorded, tmp_path: Path
) -> None:
    [path] = export_run(store, recorded.run_id, "json", tmp_path)  # a folder: run-<id>.json inside
    assert path == tmp_path / f"run-{recorded.run_id}.json"
    document = strict_load(path)
    run = store.run(recorded.run_id)
    assert (document["format"], document["format_version"]) == ("gpu-train-monitor run", 1)
    assert document["run"]["id"] == recorded.run_id and document["run"]["status"] == "completed"
    assert document["run"]["started"].startswith(time.strftime("%Y-%m-%dT%H:%M", time.localtime(run.started_at)))
    assert document["config"] == store.config(recorded.run_id)
    assert document["summary"]["steps"] == 12 and document["start"]["run_uid"] == run.uid
    epochs = store.events(recorded.run_id, kinds=("EpochEnded",))
    assert [e["epoch"] for e in document["epochs"]] == [e.data["epoch"] for e in epochs] == [1, 2]
    assert document["epochs"][-1]["val_loss"] == epochs[-1].data["val_loss"]
    assert document["memory_breakdowns"] and document["other_events"] == []
    assert document["steps"]["step"] == list(range(1, 13))
    assert document["steps"]["loss"] == list(store.steps(recorded.run_id).losses)
    assert document["reports"]["step"] == [r.step for r in store.reports(recorded.run_id)]
    assert document["smoothing"] == 0.9

    [named] = export_run(store, recorded.nan_id, "json", tmp_path / "sub" / "nan-run.json")  # a file name
    nan_document = strict_load(named)
    assert nan_document["steps"]["loss"] == [2.0, 1.8, 1.5, None, None]
    assert nan_document["steps"]["elapsed_s"][2] is None
    assert nan_document["run"]["status"] == "diverged" and nan_document["run"]["resumes"] == 1
    assert run_document(store, recorded.run_id, series=False).keys() == document.keys() - {
        "steps",
        "reports",
        "smoothing",
    }


def accumulate(folder: Path):  # noqa: ANN201 - tensorboard's EventAccumulator
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    accumulator = EventAccumulator(str(folder), size_guidance={"scalars": 0, "tensors": 0})
    accumulator.Reload()
    return accumulator


def test_tensorboard_reads_the_losses_throughput_and_memory_at_the_real_steps_and_times(
    store: RunStore, recorded: Recorded, tmp_path: Path
) -> None:
    [event_file] = export_run(store, recorded.run_id, "tensorboard", tmp_path / "logs")
    assert event_file.parent == tmp_path / "logs" / f"run-{recorded.run_id}"
    board = accumulate(event_file.parent)
    memory_tags = {
        f"memory/{figure}_MB"
        for figure in (
            "allocated",
            "reserved",
            "peak_allocated",
            "peak_reserved",
            "capacity",
            "process_rss",
            "device_used",
        )
    }
    assert (
        set(board.Tags()["scalars"])
        == {
            "loss/train",
            "loss/smoothed",
            "loss/train_epoch",
            "loss/val",
            "accuracy/val",
            "throughput/images_per_s",
            "train/batch_size",
        }
        | memory_tags
    )
    table = step_table(store, recorded.run_id)
    loss = board.Scalars("loss/train")
    assert [e.step for e in loss] == table.steps.tolist()
    assert [e.value for e in loss] == pytest.approx(table.losses.tolist(), rel=1e-6)  # float32 in the file
    assert [e.wall_time for e in loss] == table.unix_time.tolist()
    assert [e.value for e in board.Scalars("loss/smoothed")] == pytest.approx(table.smoothed.tolist(), rel=1e-6)
    epochs = store.events(recorded.run_id, kinds=("EpochEnded",))
    accuracy = board.Scalars("accuracy/val")
    assert [e.step for e in accuracy] == [e.data["step"] for e in epochs]
    assert [e.value for e in accuracy] == pytest.approx([e.data["val_accuracy"] for e in epochs], rel=1e-6)
    reports = store.reports(recorded.run_id)
    rate = board.Scalars("throughput/images_per_s")
    assert [(e.step, e.wall_time) for e in rate] == [(r.step, r.at) for r in reports]
    assert [e.value for e in rate] == pytest.approx([r.samples_per_s for r in reports], rel=1e-6)
    assert [e.value for e in board.Scalars("memory/peak_allocated_MB")] == pytest.approx(
        [r.peak_allocated_bytes / 1e6 for r in reports], rel=1e-6
    )
    [text] = board.Tensors("run/text_summary")
    assert b"tiny-cnn" in text.tensor_proto.string_val[0] and b"synthetic_samples" in text.tensor_proto.string_val[0]


def test_tensorboard_shows_runs_exported_to_one_log_dir_side_by_side_and_a_re_export_replaces_its_file(
    store: RunStore, recorded: Recorded, tmp_path: Path
) -> None:
    from tensorboard.backend.event_processing.plugin_event_multiplexer import EventMultiplexer
    from tensorboard.util import tensor_util

    logs = tmp_path / "logs"
    export_run(store, recorded.run_id, "tensorboard", logs)
    export_run(store, recorded.nan_id, "tensorboard", logs)
    [again] = export_run(store, recorded.nan_id, "tensorboard", logs)
    assert list(again.parent.iterdir()) == [again]  # the earlier file of that run is gone
    assert sorted(p.name for p in logs.iterdir()) == sorted([f"run-{recorded.run_id}", f"run-{recorded.nan_id}"])
    # the multiplexer TensorBoard's server loads a --logdir with; it keeps scalars as tensors
    boards = EventMultiplexer(size_guidance={"tensors": 0}).AddRunsFromDirectory(str(logs))
    boards.Reload()
    assert set(boards.Runs()) == {f"run-{recorded.run_id}", f"run-{recorded.nan_id}"}
    values = [
        float(tensor_util.make_ndarray(e.tensor_proto)) for e in boards.Tensors(f"run-{recorded.nan_id}", "loss/train")
    ]
    assert values[:3] == pytest.approx([2.0, 1.8, 1.5]) and math.isnan(values[3]) and values[4] == math.inf


def test_tensorboard_export_without_the_package_says_how_to_install_it(
    store: RunStore, recorded: Recorded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ["tensorboard", *(name for name in sys.modules if name.startswith("tensorboard."))]:
        monkeypatch.setitem(sys.modules, name, None)  # as if it were not installed: importing any of it fails
    with pytest.raises(UserError, match=r'pip install "gpu-train-monitor\[tensorboard\]"'):
        export_run(store, recorded.run_id, "tensorboard", tmp_path / "logs")
    assert not (tmp_path / "logs").exists()


def test_requests_that_cannot_be_met_are_one_sentence_user_errors(
    store: RunStore, recorded: Recorded, tmp_path: Path
) -> None:
    a_file = tmp_path / "taken"
    a_file.write_text("x")
    with pytest.raises(UserError, match="unknown export format 'xlsx': use csv, json or tensorboard"):
        export_run(store, recorded.run_id, "xlsx", tmp_path)
    with pytest.raises(UserError, match="is a file, but the CSV export folder must be a folder"):
        export_run(store, recorded.run_id, "csv", a_file)
    with pytest.raises(UserError, match="is a file, but the folder for the JSON export must be a folder"):
        export_run(store, recorded.run_id, "json", a_file / "run.json")
    with pytest.raises(UserError, match="smoothing must be between 0 and 0.999"):
        export_run(store, recorded.run_id, "csv", tmp_path, smoothing=1.5)
    with pytest.raises(RunNotFound, match="no run 999 in"):
        export_run(store, 999, "json", tmp_path)
    assert a_file.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def report(step: int, elapsed_s: float) -> ReportRow:
    return ReportRow(
        step=step,
        at=1e9 + elapsed_s,
        elapsed_s=elapsed_s,
        samples=step * 8,
        samples_per_s=8.0,
        batch_size=8,
        total_steps=10,
        eta_s=None,
        allocated_bytes=1,
        reserved_bytes=0,
        peak_allocated_bytes=1,
        peak_reserved_bytes=0,
        capacity_bytes=2,
        device_used_bytes=None,
        process_rss_bytes=1,
    )


def test_a_steps_time_is_interpolated_between_reports_from_the_start_and_unknown_across_a_resume() -> None:
    steps = np.arange(1, 11)
    reports = [report(2, 4.0), report(6, 6.0), report(10, 30.0)]
    assert step_elapsed(steps, reports).tolist() == [2.0, 4.0, 4.5, 5.0, 5.5, 6.0, 12.0, 18.0, 24.0, 30.0]
    resumed = step_elapsed(steps, reports, resumed_at=6)  # the pause before step 7 lasted any time
    assert np.isnan(resumed[6:9]).all() and resumed[[5, 9]].tolist() == [6.0, 30.0]
    assert np.isnan(step_elapsed(steps, [])).all()
