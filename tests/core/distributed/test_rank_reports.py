"""A data-parallel run in the run store: every rank's samples kept with their reports, shown by `runs list`
and `runs show`, and written by every export; an ordinary run's outputs stay as they were.

One real tiny-cnn run is trained per module and recorded as it is (world size 1). The data-parallel run is
what rank 0 of a 2-process run emits, fed to a real RunRecorder: that run's own events with world_size=2,
and on each report two RankSamples, rank 0's with the report's own memory sample and rank 1's with a real
CPU reading taken then, 64 MB higher (a rank that holds more than rank 0, so that figures can be told
apart), and each rank its own share of the images/s.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import sqlite3
import statistics
from pathlib import Path

import pytest

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.cli.main import main
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import (
    Event,
    MemoryBreakdown,
    MemorySample,
    RankSample,
    RunFinished,
    RunStarted,
    StepsReported,
)
from gpu_train_monitor.export.csv_files import MEMORY_COLUMNS, RANK_COLUMNS
from gpu_train_monitor.export.run_export import export_run
from gpu_train_monitor.memory.probe import MemoryProbe
from gpu_train_monitor.store.recorder import RunRecorder
from gpu_train_monitor.store.run_store import RankReportRow, RunStore

FAST = dict(device="cpu", model="tiny-cnn", synthetic_samples=256, batch_size=32, report_interval=0.01)
RANK1_EXTRA_BYTES = 64 * 10**6
RANK_SHARES = (0.55, 0.45)  # each rank's part of the run's images/s


@dataclasses.dataclass(frozen=True)
class Recorded:
    path: Path
    plain_id: int  # the real run, as trained
    parallel_id: int  # its events as a 2-process run's rank 0 emits them
    events: list[Event]  # the data-parallel run's events, as recorded


def higher(sample: MemorySample, extra: int) -> MemorySample:
    return dataclasses.replace(
        sample,
        allocated_bytes=sample.allocated_bytes + extra,
        peak_allocated_bytes=sample.peak_allocated_bytes + extra,
        process_rss_bytes=sample.process_rss_bytes + extra,
    )


def as_data_parallel(events: list[Event], uid: str, rate_scale: float = 1.0) -> list[Event]:
    """The events of a real run as rank 0 of a 2-process run emits them (see the module's docstring)."""
    probe = MemoryProbe("cpu")
    parallel: list[Event] = []
    for event in events:
        match event:
            case RunStarted():
                parallel.append(dataclasses.replace(event, run_uid=uid, world_size=2, rank_devices=("cpu", "cpu")))
            case StepsReported():
                rate = event.samples_per_s * rate_scale
                ranks = (
                    RankSample(0, "cpu", rate * RANK_SHARES[0], event.memory),
                    RankSample(1, "cpu", rate * RANK_SHARES[1], higher(probe.sample(), RANK1_EXTRA_BYTES)),
                )
                parallel.append(dataclasses.replace(event, samples_per_s=rate, ranks=ranks))
            case MemoryBreakdown():
                parallel += [event, dataclasses.replace(event, rank=1)]
            case RunFinished():
                summary = dataclasses.replace(
                    event.summary,
                    world_size=2,
                    ranks=tuple(
                        {
                            "rank": rank,
                            "device": "cpu",
                            "samples_per_s": (event.summary.samples_per_s or 0.0) * share,
                            "peak_allocated_bytes": 0,
                            "peak_reserved_bytes": 0,
                            "peak_rss_bytes": 0,
                        }
                        for rank, share in enumerate(RANK_SHARES)
                    ),
                )
                parallel.append(dataclasses.replace(event, summary=summary))
            case _:
                parallel.append(event)
    return parallel


def feed(path: Path, events: list[Event]) -> int:
    recorder = RunRecorder(path)
    for event in events:
        recorder(event)
    recorder.close()
    assert recorder.problem is None and recorder.run_id is not None
    return recorder.run_id


def expected_rows(events: list[Event]) -> list[RankReportRow]:
    return [
        RankReportRow(
            e.step,
            r.rank,
            r.device,
            r.samples_per_s,
            r.memory.allocated_bytes,
            r.memory.reserved_bytes,
            r.memory.peak_allocated_bytes,
            r.memory.peak_reserved_bytes,
            r.memory.capacity_bytes,
            r.memory.device_used_bytes,
            r.memory.process_rss_bytes,
        )
        for e in events
        if isinstance(e, StepsReported)
        for r in e.ranks
    ]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    path = tmp_path_factory.mktemp("store") / "runs.sqlite3"
    events: list[Event] = []
    recorder = RunRecorder(path)
    TrainingSession(RunConfig(**FAST, max_steps=12, epochs=2), [events.append, recorder]).run()  # type: ignore[arg-type]
    recorder.close()
    assert recorder.problem is None and recorder.run_id is not None
    assert sum(isinstance(e, StepsReported) for e in events) >= 3 and any(
        isinstance(e, MemoryBreakdown) for e in events
    )
    parallel = as_data_parallel(events, "data-parallel")
    return Recorded(path, recorder.run_id, feed(path, parallel), parallel)


@pytest.fixture()
def store(recorded: Recorded) -> RunStore:
    with RunStore(recorded.path) as opened:
        yield opened


def own_copy(recorded: Recorded, copy: Path) -> Path:
    """A consistent copy of the module's store (SQLite's backup) that a test may change."""
    with sqlite3.connect(recorded.path) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    source.close()
    target.close()
    return copy


def runs(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> str:
    code = main(["runs", *args, "--runs-db", str(path)])
    captured = capsys.readouterr()
    assert code == 0 and captured.err == "", captured.err
    return captured.out


# ---- the store ---------------------------------------------------------------------------------------
def test_every_ranks_sample_is_kept_with_its_report_and_read_back_by_step_then_rank(
    store: RunStore, recorded: Recorded
) -> None:
    run = store.run(recorded.parallel_id)
    assert (run.world_size, run.devices, run.status, run.steps) == (2, "cpu x2", "completed", 12)
    rows = store.rank_reports(recorded.parallel_id)
    assert rows == expected_rows(recorded.events)
    assert [(r.step, r.rank) for r in rows] == sorted((r.step, r.rank) for r in rows)
    report_steps = [r.step for r in store.reports(recorded.parallel_id)]
    assert [r.step for r in rows] == [step for step in report_steps for _ in range(2)]  # each report, both ranks
    middle = report_steps[len(report_steps) // 2]
    assert store.rank_reports(recorded.parallel_id, after_step=middle) == [r for r in rows if r.step > middle]
    assert store.rank_reports(recorded.parallel_id, after_step=report_steps[-1]) == []
    # the run's peak is its fullest rank's: rank 1 held 64 MB more than rank 0
    assert run.peak_allocated_bytes == max(r.peak_allocated_bytes for r in rows)
    assert run.peak_allocated_bytes > max(r.peak_allocated_bytes for r in rows if r.rank == 0)


def test_an_ordinary_run_has_world_size_1_and_no_rank_reports(store: RunStore, recorded: Recorded) -> None:
    run = store.run(recorded.plain_id)
    assert (run.world_size, run.devices, store.rank_reports(recorded.plain_id)) == (1, "cpu", [])


def test_the_rank_a_breakdown_was_measured_on_is_kept(store: RunStore, recorded: Recorded) -> None:
    breakdowns = store.events(recorded.parallel_id, kinds=("MemoryBreakdown",))
    assert [e.data["rank"] for e in breakdowns] == [0, 1] * (len(breakdowns) // 2) and breakdowns
    assert breakdowns[0].data["params_bytes"] == breakdowns[1].data["params_bytes"] > 0


def test_deleting_a_run_deletes_its_rank_reports(recorded: Recorded, tmp_path: Path) -> None:
    path = own_copy(recorded, tmp_path / "copy.sqlite3")
    with RunStore(path) as store:
        store.delete(recorded.parallel_id)
        left = store.connection.execute(
            "SELECT count(*) FROM rank_reports WHERE run_id = ?", (recorded.parallel_id,)
        ).fetchone()[0]
        assert left == 0 and store.rank_reports(recorded.parallel_id) == []


def test_a_resume_replaces_the_ranks_after_its_checkpoint_and_a_branch_copies_those_before(
    recorded: Recorded, tmp_path: Path
) -> None:
    """Resumed from step 5 and stopped at step 9: a killed run continues as itself, its rank rows after
    step 5 replaced by the resumed process's (none left beyond step 9); a run that had finished at step 12
    stays as it is, and the resume is a branch that starts with the rank rows of the steps they share."""
    started = next(e for e in recorded.events if isinstance(e, RunStarted))
    finished = next(e for e in recorded.events if isinstance(e, RunFinished))
    later = [
        e
        for e in as_data_parallel(recorded.events, started.run_uid, rate_scale=1000.0)
        if not isinstance(e, RunStarted) and 5 < getattr(e, "step", 0) <= 9
    ]  # what the resumed process reports
    resume = [
        dataclasses.replace(started, start_step=5),
        *later,
        dataclasses.replace(finished, step=9, status="stopped"),
    ]
    before = [r for r in expected_rows(recorded.events) if r.step <= 5]
    after = [r for r in expected_rows(later) if r.step > 5]
    assert before and after

    path = own_copy(recorded, tmp_path / "finished.sqlite3")
    branch_id = feed(path, resume)  # the recorded run completed at step 12: a branch
    with RunStore(path) as store:
        assert branch_id != recorded.parallel_id and store.run(branch_id).world_size == 2
        assert store.rank_reports(branch_id) == before + after
        assert store.rank_reports(recorded.parallel_id) == expected_rows(recorded.events)  # untouched

    path = own_copy(recorded, tmp_path / "killed.sqlite3")
    db = sqlite3.connect(path)
    db.execute("UPDATE runs SET status = 'interrupted' WHERE id = ?", (recorded.parallel_id,))
    db.commit()
    db.close()
    assert feed(path, resume) == recorded.parallel_id  # the killed run continues as itself
    with RunStore(path) as store:
        assert store.rank_reports(recorded.parallel_id) == before + after
        assert store.run(recorded.parallel_id).resumes == 1


# ---- the CLI -----------------------------------------------------------------------------------------
def test_runs_list_shows_the_world_size_of_a_data_parallel_run(
    capsys: pytest.CaptureFixture[str], recorded: Recorded
) -> None:
    header, *lines = runs(capsys, recorded.path, "list").splitlines()
    assert "device" in header.split()
    by_id = {line.split()[0]: line for line in lines}
    assert " cpu x2 " in by_id[str(recorded.parallel_id)] and " cpu x2 " not in by_id[str(recorded.plain_id)]
    listed = {run["id"]: run for run in json.loads(runs(capsys, recorded.path, "list", "--json"))}
    assert (listed[recorded.parallel_id]["world_size"], listed[recorded.plain_id]["world_size"]) == (2, 1)
    assert listed[recorded.parallel_id]["device"] == "cpu"


def test_runs_show_prints_a_table_of_the_ranks(capsys: pytest.CaptureFixture[str], recorded: Recorded) -> None:
    lines = runs(capsys, recorded.path, "show", str(recorded.parallel_id)).splitlines()
    device = next(line for line in lines if line.startswith("  device "))
    assert device.endswith(", 2 processes (data-parallel)")
    start = lines.index("ranks (2)")
    assert lines[start + 1].split() == [
        "rank",
        "device",
        "images/s",
        "peak",
        "allocated",
        "peak",
        "reserved",
        "peak",
        "RSS",
    ]
    rows = expected_rows(recorded.events)
    for rank in (0, 1):
        own = [r for r in rows if r.rank == rank]
        assert lines[start + 2 + rank].split() == [
            str(rank),
            "cpu",
            f"{statistics.median(r.samples_per_s for r in own):,.0f}",
            *format_bytes(max(r.peak_allocated_bytes for r in own)).split(),
            "-",
            *format_bytes(max(r.process_rss_bytes for r in own)).split(),
        ]
    assert lines[start + 4].startswith("memory breakdown (step ") and ", rank " in lines[start + 4]  # the fullest's
    assert "configuration" in lines[start + 5 :]
    plain = runs(capsys, recorded.path, "show", str(recorded.plain_id))
    assert "ranks (" not in plain and "data-parallel" not in plain


def test_runs_show_as_json_has_each_ranks_figures(capsys: pytest.CaptureFixture[str], recorded: Recorded) -> None:
    document = json.loads(runs(capsys, recorded.path, "show", str(recorded.parallel_id), "--json"))
    rows = expected_rows(recorded.events)
    assert [rank["rank"] for rank in document["ranks"]] == [0, 1]
    one = document["ranks"][1]
    assert one["median_samples_per_s"] == pytest.approx(statistics.median(r.samples_per_s for r in rows if r.rank == 1))
    assert one["peak_allocated_bytes"] == max(r.peak_allocated_bytes for r in rows if r.rank == 1)
    assert one["reports"] == len(rows) // 2 and "rank_reports" not in document  # no series in `show`
    assert "ranks" not in json.loads(runs(capsys, recorded.path, "show", str(recorded.plain_id), "--json"))


# ---- the exports -------------------------------------------------------------------------------------
def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def test_csv_writes_a_ranks_file_one_row_per_rank_per_report(
    store: RunStore, recorded: Recorded, tmp_path: Path
) -> None:
    paths = export_run(store, recorded.parallel_id, "csv", tmp_path)
    assert [p.name for p in paths] == [
        f"run-{recorded.parallel_id}-{name}.csv" for name in ("steps", "memory", "ranks")
    ]
    assert read_csv(paths[1])[0] == list(MEMORY_COLUMNS)  # the memory file as for any run
    header, rows = read_csv(paths[2])
    assert header == list(RANK_COLUMNS)
    expected = store.rank_reports(recorded.parallel_id)
    reports = {r.step: r for r in store.reports(recorded.parallel_id)}
    assert [(int(row["step"]), int(row["rank"]), row["device"]) for row in rows] == [
        (r.step, r.rank, r.device) for r in expected
    ]
    for row, rank in zip(rows, expected):
        assert float(row["samples_per_s"]) == rank.samples_per_s
        assert int(row["peak_allocated_bytes"]) == rank.peak_allocated_bytes
        assert int(row["process_rss_bytes"]) == rank.process_rss_bytes
        assert (
            float(row["elapsed_s"]) == reports[rank.step].elapsed_s and float(row["unix_time"]) == reports[rank.step].at
        )
    plain = export_run(store, recorded.plain_id, "csv", tmp_path / "plain")
    assert [p.name for p in plain] == [f"run-{recorded.plain_id}-steps.csv", f"run-{recorded.plain_id}-memory.csv"]


def test_cli_export_lists_the_ranks_file(
    capsys: pytest.CaptureFixture[str], recorded: Recorded, tmp_path: Path
) -> None:
    out = runs(capsys, recorded.path, "export", str(recorded.parallel_id), "--format", "csv", "--out", str(tmp_path))
    assert out.splitlines()[-1] == str(tmp_path / f"run-{recorded.parallel_id}-ranks.csv")


def test_json_export_has_the_rank_reports_series(store: RunStore, recorded: Recorded, tmp_path: Path) -> None:
    [path] = export_run(store, recorded.parallel_id, "json", tmp_path)
    document = json.loads(
        path.read_text(encoding="utf-8"), parse_constant=lambda name: pytest.fail(f"{name} in strict JSON")
    )
    expected = store.rank_reports(recorded.parallel_id)
    series = document["rank_reports"]
    assert list(series) == [field.name for field in dataclasses.fields(RankReportRow)]
    assert list(zip(series["step"], series["rank"])) == [(r.step, r.rank) for r in expected]
    assert series["reserved_bytes"] == [r.reserved_bytes for r in expected]
    assert document["run"]["world_size"] == 2 and [rank["rank"] for rank in document["ranks"]] == [0, 1]
    assert [e["rank"] for e in document["memory_breakdowns"]][:2] == [0, 1]
    [plain] = export_run(store, recorded.plain_id, "json", tmp_path)
    plain_document = json.loads(plain.read_text(encoding="utf-8"))
    assert "rank_reports" not in plain_document and "ranks" not in plain_document
    assert plain_document["run"]["world_size"] == 1


def test_tensorboard_has_each_ranks_throughput_and_memory(store: RunStore, recorded: Recorded, tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    [event_file] = export_run(store, recorded.parallel_id, "tensorboard", tmp_path)
    board = EventAccumulator(str(event_file.parent), size_guidance={"scalars": 0, "tensors": 0})
    board.Reload()
    tags = set(board.Tags()["scalars"])
    assert {"throughput/images_per_s", "memory/allocated_MB"} <= tags
    for rank in (0, 1):
        assert {
            f"throughput/images_per_s/rank{rank}",
            f"memory/allocated_MB/rank{rank}",
            f"memory/process_rss_MB/rank{rank}",
            f"memory/capacity_MB/rank{rank}",
        } <= tags
    rows = [r for r in store.rank_reports(recorded.parallel_id) if r.rank == 1]
    reports = {r.step: r.at for r in store.reports(recorded.parallel_id)}
    rate = board.Scalars("throughput/images_per_s/rank1")
    assert [(e.step, e.wall_time) for e in rate] == [(r.step, reports[r.step]) for r in rows]
    assert [e.value for e in rate] == pytest.approx([r.samples_per_s for r in rows], rel=1e-6)
    assert [e.value for e in board.Scalars("memory/peak_allocated_MB/rank1")] == pytest.approx(
        [r.peak_allocated_bytes / 1e6 for r in rows], rel=1e-6
    )
    [text] = board.Tensors("run/text_summary")
    assert b"| world_size | 2 |" in text.tensor_proto.string_val[0]
    [plain_file] = export_run(store, recorded.plain_id, "tensorboard", tmp_path)
    plain = EventAccumulator(str(plain_file.parent), size_guidance={"scalars": 0, "tensors": 0})
    plain.Reload()
    assert not any("/rank" in tag for tag in plain.Tags()["scalars"])
    [plain_text] = plain.Tensors("run/text_summary")
    assert b"world_size" not in plain_text.tensor_proto.string_val[0]  # an ordinary run's summary as before
