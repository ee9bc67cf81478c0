"""Exports of a recorded run that other tools read: CSV (pandas, spreadsheets), JSON, TensorBoard event files.

Exports read the run store, never a live session, so any recorded run can be exported (a run still training:
what has been recorded so far). `export_run` is the one entry point, for the CLI (`runs export`) and the
window; its errors are `UserError`s with a sentence people can act on. Where the files go:

  csv          OUT is a folder (created if missing): run-<id>-steps.csv and run-<id>-memory.csv in it, and
               for a data-parallel run run-<id>-ranks.csv (one row per rank per report)
  json         OUT is a file, or a folder (existing, or written with a trailing /) to hold run-<id>.json
  tensorboard  OUT is a log dir (created if missing): the event file goes to OUT/run-<id>/

The JSON document is strict (NaN and infinities are null); its layout is `run_document`'s.
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..base.errors import UserError
from ..base.outputs import check_distinct_outputs, store_protection, write_json
from ..base.text import Message
from .smoothing import DEFAULT_SMOOTHING

if TYPE_CHECKING:  # numpy and the store load when an export runs: the CLI's parser imports this module
    from ..store.run_store import EventRow, RankReportRow, RunRow, RunStore
    from .step_table import StepTable

FORMATS = ("csv", "json", "tensorboard")
DOCUMENT_FORMAT = "gpu-train-monitor run"
DOCUMENT_VERSION = 1
T = TypeVar("T")
EVENT_GROUPS = {  # the store's event kinds -> the JSON document's lists
    "EpochEnded": "epochs",
    "OutOfMemory": "out_of_memory",
    "CacheCleared": "cache_clears",
    "CheckpointSaved": "checkpoints",
    "SnapshotSaved": "memory_snapshots",
    "MemoryBreakdown": "memory_breakdowns",
    "RunPaused": "pauses",
    "RunResumed": "pauses",
    "LogMessage": "messages",
}


def export_run(
    store: RunStore,
    run_id: int,
    fmt: str,
    out: str | os.PathLike[str],
    smoothing: float = DEFAULT_SMOOTHING,
    store_option: str = "",
) -> list[Path]:
    """Export run `run_id` as `fmt` (csv, json or tensorboard) to `out`; the paths of the files written.

    `smoothing` is the EMA weight of the smoothed loss (0..0.999, the loss plot's). An `out` that is the
    store's own file is a ConfigError("out") naming `store_option` (the CLI's --runs-db; '': the store)."""
    if fmt not in FORMATS:
        raise UserError(Message("unknown export format {fmt}: use csv, json or tensorboard", fmt=repr(fmt)))
    row = store.run(run_id)  # RunNotFound before any file is touched
    target = Path(os.fspath(out)).expanduser()
    kept = store_protection(store.path, store_option)  # never written over (a folder OUT is refused anyway)
    if fmt == "json":
        check_distinct_outputs({"out": out}, kept)  # before a folder is made
        path = json_path(target, run_id, str(out).endswith(("/", os.sep)))
        check_distinct_outputs({"out": path}, kept)
        document = run_document(store, run_id, series=True, smoothing=smoothing)
        _guard(path, lambda: write_json(path, document))
        return [path]
    from .step_table import step_table

    reports = store.reports(run_id)
    table = step_table(store, run_id, smoothing, reports)
    rank_reports = store.rank_reports(run_id) if row.world_size > 1 else []
    if fmt == "tensorboard":
        from .tensorboard_events import check_tensorboard, run_text, write_run_tensorboard

        check_tensorboard()  # missing: say so before creating any folder
        folder = _folder(target, Message("TensorBoard log dir"))
        epochs = store.events(run_id, kinds=("EpochEnded",))
        text = run_text(run_facts(row), store.config(run_id))
        return _guard(folder, lambda: write_run_tensorboard(folder, row, table, reports, epochs, text, rank_reports))
    from .csv_files import write_run_csv

    for name in ("steps", "memory", "ranks"):  # the files export_csv writes
        check_distinct_outputs({"out": target / f"run-{run_id}-{name}.csv"}, kept)
    folder = _folder(target, Message("CSV export folder"))
    tokens = row.tokens_per_sample if row.throughput.tokens else 0
    return _guard(folder, lambda: write_run_csv(folder, run_id, table, reports, rank_reports, tokens))


def json_path(target: Path, run_id: int, as_folder: bool = False) -> Path:
    """The JSON file to write: `target` itself, or run-<id>.json inside it when it is (or names) a folder."""
    if as_folder or target.is_dir():
        return _folder(target, Message("JSON export folder")) / f"run-{run_id}.json"
    _folder(target.parent, Message("folder for the JSON export"))
    return target


def run_document(
    store: RunStore, run_id: int, *, series: bool = True, smoothing: float = DEFAULT_SMOOTHING
) -> dict[str, Any]:
    """Everything recorded about a run as plain JSON-ready values.

    Keys: format, format_version, run (the history's facts, with local ISO times), config (as run), start
    (the RunStarted event), summary (None while running), then one list per kind of event, each entry the
    event's fields with `at` (Unix time) and `step`: epochs, out_of_memory, cache_clears, checkpoints,
    memory_snapshots, memory_breakdowns, pauses (`event`: paused or resumed), messages, other_events; with
    `series`, also steps (columns step, epoch, loss, smoothed_loss, elapsed_s; the EMA weight in
    smoothing) and reports (one column per report field).

    A data-parallel run (run.world_size > 1) also has `ranks`, one entry per rank (`rank_facts`), and with
    `series` `rank_reports`: one column per RankReportRow field, a row per rank per report, by step then
    rank. An ordinary run's document has neither, exactly as before data-parallel runs existed."""
    row = store.run(run_id)
    document: dict[str, Any] = {
        "format": DOCUMENT_FORMAT,
        "format_version": DOCUMENT_VERSION,
        "run": run_facts(row),
        "config": store.config(run_id),
        "start": store.started(run_id),
        "summary": store.summary(run_id),
    }
    for group in dict.fromkeys([*EVENT_GROUPS.values(), "other_events"]):
        document[group] = []
    for event in store.events(run_id):
        document[EVENT_GROUPS.get(event.kind, "other_events")].append(event_entry(event))
    rank_reports = store.rank_reports(run_id) if row.world_size > 1 else []
    if row.world_size > 1:
        document["ranks"] = rank_facts(rank_reports)
    if series:
        from ..store.run_store import RankReportRow, ReportRow
        from .step_table import step_table

        reports = store.reports(run_id)
        table = step_table(store, run_id, smoothing, reports)
        document["smoothing"] = table.smoothing
        document["steps"] = step_columns(table)
        document["reports"] = {
            field.name: [getattr(r, field.name) for r in reports] for field in dataclasses.fields(ReportRow)
        }
        if row.throughput.tokens:  # a text run: its throughput in tokens/s too
            document["reports"]["tokens_per_s"] = [row.throughput.of(r.samples_per_s) for r in reports]
        if row.world_size > 1:
            document["rank_reports"] = {
                field.name: [getattr(r, field.name) for r in rank_reports]
                for field in dataclasses.fields(RankReportRow)
            }
    return document


def rank_facts(rank_reports: Sequence[RankReportRow]) -> list[dict[str, Any]]:
    """Each rank of a data-parallel run over its reports, by rank: rank, device (its latest), reports (how
    many), median_samples_per_s (the median, which the first report's warm-up and a pause do not drag down;
    None without a finite one), peak_allocated_bytes, peak_reserved_bytes, peak_rss_bytes (the highest
    process RSS sampled)."""
    by_rank: dict[int, list[RankReportRow]] = {}
    for report in rank_reports:
        by_rank.setdefault(report.rank, []).append(report)
    facts = []
    for rank, rows in sorted(by_rank.items()):
        rates = [r.samples_per_s for r in rows if r.samples_per_s is not None]
        facts.append(
            {
                "rank": rank,
                "device": rows[-1].device,
                "reports": len(rows),
                "median_samples_per_s": statistics.median(rates) if rates else None,
                "peak_allocated_bytes": max(r.peak_allocated_bytes for r in rows),
                "peak_reserved_bytes": max(r.peak_reserved_bytes for r in rows),
                "peak_rss_bytes": max(r.process_rss_bytes for r in rows),
            }
        )
    return facts


def run_facts(row: RunRow) -> dict[str, Any]:
    """The run's row as a dict, with its start and end also as local ISO 8601 times."""
    facts = dataclasses.asdict(row)
    facts["tokens_per_s"] = row.speed if row.throughput.tokens else None  # a text run's samples_per_s x seq_len
    facts["title"] = row.title
    facts["started"] = iso_time(row.started_at)
    facts["finished"] = None if row.finished_at is None else iso_time(row.finished_at)
    return facts


def event_entry(event: EventRow) -> dict[str, Any]:
    entry: dict[str, Any] = {"at": event.at, "step": event.step, **event.data}
    if event.kind in ("RunPaused", "RunResumed"):
        entry["event"] = "paused" if event.kind == "RunPaused" else "resumed"
    elif EVENT_GROUPS.get(event.kind) is None:
        entry["kind"] = event.kind
    return entry


def step_columns(table: StepTable) -> dict[str, list[Any]]:
    return {
        "step": table.steps.tolist(),
        "epoch": table.epochs.tolist(),
        "loss": table.losses.tolist(),
        "smoothed_loss": table.smoothed.tolist(),
        "elapsed_s": table.elapsed_s.tolist(),
    }


def iso_time(unix_time: float) -> str:
    """Local time with its UTC offset, to the second: 2026-12-03T05:20:11+01:00."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(unix_time)) + _offset(unix_time)


def local_time(unix_time: float) -> str:
    """Local time to the minute, as the history lists runs: 2026-12-03 05:20."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(unix_time))


def _offset(unix_time: float) -> str:
    offset = time.strftime("%z", time.localtime(unix_time))  # +0100
    return f"{offset[:3]}:{offset[3:]}" if len(offset) == 5 else ""


def _folder(path: Path, what: str) -> Path:
    """`path` as a folder, created with its parents if missing; a UserError if it cannot be."""
    if path.exists() and not path.is_dir():
        raise UserError(Message("{path} is a file, but the {what} must be a folder", path=str(path), what=what))
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            Message(
                "cannot create the {what} {path} ({error})", what=what, path=str(path), error=exc.strerror or str(exc)
            )
        ) from None
    return path


def _guard(path: Path, write: Callable[[], T]) -> T:
    """Run `write`; a failure to write (disk full, no permission) becomes one sentence naming `path`."""
    try:
        return write()
    except OSError as exc:
        where = exc.filename or path
        raise UserError(
            Message("could not write the export to {where} ({error})", where=str(where), error=exc.strerror or str(exc))
        ) from None
