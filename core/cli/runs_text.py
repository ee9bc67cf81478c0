"""The text `runs list` and `runs show` print: a table of runs, and one run's record in full.

Pure functions of what the run store returns (no torch, no Qt), so the words are the same wherever a
recorded run is described.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

from ..base.text import format_bytes, printable
from ..config.sequences import is_text_dataset, throughput
from ..events import event_text
from ..events.module_bytes import modules_from_json
from ..export.run_export import local_time
from ..memory.like_measured import PredictedStep, as_measured, error_percent
from ..store.run_store import RunRow
from .summary_text import phase_lines

LIST_COLUMNS = (
    "id",
    "started",
    "status",
    "model",
    "dataset",
    "device",
    "steps",
    "speed",
    "final loss",
    "peak memory",
    "name",
)
NUMERIC = {"id", "steps", "speed", "final loss", "peak memory"}  # right-aligned


def live_status(row: RunRow) -> str:
    """'running (live)' for a run whose process still trains it, else its status."""
    return "running (live)" if row.live else row.status


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None or not math.isfinite(value) else format(value, spec)


def _speed(row: RunRow) -> str:
    """'1,234 img/s', '45,678 tok/s' (a text run's tokens/s), '-' without a figure."""
    unit = row.throughput
    return "-" if row.speed is None or not math.isfinite(row.speed) else f"{row.speed:,.0f} {unit.short}"


def runs_table(rows: Sequence[RunRow]) -> str:
    """One line per run under a header, columns as wide as their widest cell; the name (or comparison
    label) last, since it is free text. A data-parallel run's device reads 'cuda:0 x4' (rank 0's, times the
    world size). Control characters in a cell (a remote store's run name) are shown escaped (`printable`)."""
    cells = [
        [
            printable(cell)
            for cell in (
                str(r.id),
                local_time(r.started_at),
                live_status(r),
                r.model,
                r.dataset,
                r.devices,
                f"{r.steps:,}",
                _speed(r),
                _number(r.loss_last, ".4f"),
                format_bytes(r.peak_allocated_bytes) if r.peak_allocated_bytes else "-",
                r.name or r.label,
            )
        ]
        for r in rows
    ]
    widths = [max(len(column), *(len(row[i]) for row in cells)) for i, column in enumerate(LIST_COLUMNS)]

    def line(values: Sequence[str]) -> str:
        parts = [
            value.rjust(width) if column in NUMERIC else value.ljust(width)
            for column, value, width in zip(LIST_COLUMNS[:-1], values, widths)
        ]
        return "  ".join([*parts, values[-1]]).rstrip()

    return "\n".join([line(LIST_COLUMNS), *(line(row) for row in cells)])


def run_text(document: dict[str, Any]) -> str:
    """One run in full, from `run_export.run_document(series=False)`: its facts (with where a step's time went and
    the verdict, once finished), a data-parallel run's ranks (`ranks_table`), configuration, epochs,
    out-of-memory events, cache clears, checkpoints, memory snapshots and log messages."""
    run, summary = document["run"], document["summary"] or {}
    lines = [
        f"run {run['id']}"
        + (f": {run['name']}" if run["name"] else "")
        + (f"  [{run['label']}]" if run["label"] else "")
    ]

    def fact(name: str, value: str) -> None:
        lines.append(f"  {name:<12}{value}")

    status = "running (live)" if run["live"] else run["status"]
    fact("status", status + (f": {run['message']}" if run["message"] else ""))
    finished = run["finished_at"]
    fact(
        "started",
        local_time(run["started_at"])
        + ("" if finished is None else f", finished {local_time(finished)} ({finished - run['started_at']:.1f} s)"),
    )
    config = document["config"]
    # a watched loop (a script, the watch() API, a Lightning or transformers callback): no epochs, placement or
    # checkpoints of ours
    watched = "source" in config
    fact(
        "model",
        run["model"]
        + (f" ({document['start'].get('parameters', 0):,} parameters)" if document["start"].get("parameters") else ""),
    )
    if watched and config.get("script"):
        fact("script", " ".join([str(config["script"]), *map(str, config.get("argv") or ())]))
    else:
        fact("dataset", run["dataset"])
    world_size = run.get("world_size", 1)
    fact(
        "device",
        f"{run['device']} ({run['device_name']})"
        + (f", {run['placement']} placement" if run["placement"] else "")
        + (f", {world_size} processes (data-parallel)" if world_size > 1 else ""),
    )
    fact("batch size", str(run["batch_size"]))
    fact(
        "steps",
        f"{run['steps']:,}"
        + (f" of {run['total_steps']:,}" if run["total_steps"] else "")  # a watched script may give no total
        + (f", resumed {run['resumes']} time(s)" if run["resumes"] else ""),
    )
    unit = throughput(config)  # tokens/s for a text run (samples/s x seq_len) and a watched language model
    rate = unit.of(run["samples_per_s"])
    fact("throughput", "n/a" if rate is None else f"{rate:,.0f} {unit.unit}")
    if is_text_dataset(str(config.get("dataset", ""))) and not watched:
        fact("sequences", f"{config.get('seq_len')} tokens each")
    first = summary.get("loss_first")
    last = "nan" if run["loss_last"] is None and run["status"] == "diverged" else _number(run["loss_last"], ".4f")
    fact("loss", _number(first, ".4f") + " -> " + last if first is not None else last)
    fact("val acc", "n/a" if run["val_accuracy"] is None else f"{run['val_accuracy']:.2%}")
    reserved = run["peak_reserved_bytes"]
    fact(
        "peak memory",
        format_bytes(run["peak_allocated_bytes"])
        + (f" allocated, {format_bytes(reserved)} reserved" if reserved else "")
        + (" (the fullest rank's)" if world_size > 1 else ""),
    )
    step_times = phase_lines(
        summary.get("step_phases_s"),
        summary.get("verdict"),
        summary.get("verdict_text") or "",
        summary.get("device_step_phases_s"),
    )
    lines += [f"  {line}" for line in step_times]  # as the run's summary printed them, at a fact's width
    fact("process", f"{run['pid']} on {run['host']}")
    fact("uid", run["uid"] if watched else f"{run['uid']} (the folder of its checkpoints)")
    if run["note"]:
        fact("note", run["note"])
    if document.get("ranks"):
        lines.append(f"ranks ({len(document['ranks'])})")
        lines += [f"  {line}" for line in ranks_table(document["ranks"]).splitlines()]
    lines += breakdown_lines(document)
    lines.append("configuration")
    width = max((len(key) for key in config), default=0) + 2  # a key never runs into its value
    lines += [
        f"  {key:<{width}}{json.dumps(value) if not isinstance(value, str) else value}" for key, value in config.items()
    ]
    _section(lines, "epochs", document["epochs"], _epoch_line)
    _section(lines, "out of memory", document["out_of_memory"], _oom_line)
    _section(
        lines,
        "cache clears",
        document["cache_clears"],
        lambda e: f"step {_step(e)}: freed {format_bytes(e.get('freed_bytes'))}",
    )
    _section(
        lines,
        "checkpoints",
        document["checkpoints"],
        lambda e: (
            f"step {_step(e)} (epoch {e.get('epoch')}, {e.get('reason')}): {e.get('path')} "
            f"({format_bytes(e.get('size_bytes'))})"
        ),
    )
    _section(
        lines,
        "memory snapshots",
        document["memory_snapshots"],
        lambda e: f"step {_step(e)}: {e.get('path')} ({format_bytes(e.get('size_bytes'))})",
    )
    _section(
        lines,
        "messages",
        document["messages"],
        lambda e: f"{local_time(e['at'])}  {e.get('level', 'info'):<8}{e.get('text', '')}",
    )
    return "\n".join(lines)


RANK_COLUMNS = ("rank", "device", "images/s", "peak allocated", "peak reserved", "peak RSS")


def ranks_table(ranks: Sequence[dict[str, Any]]) -> str:
    """A data-parallel run's ranks, one line each, from `run_export.rank_facts`: its device, median images/s
    over its reports, and the highest memory it reached (reserved '-' where the device has no caching
    allocator: the CPU)."""
    cells = [
        [
            str(r["rank"]),
            r["device"],
            _number(r["median_samples_per_s"], ",.0f"),
            format_bytes(r["peak_allocated_bytes"]),
            format_bytes(r["peak_reserved_bytes"]) if r["peak_reserved_bytes"] else "-",
            format_bytes(r["peak_rss_bytes"]),
        ]
        for r in ranks
    ]
    widths = [max(len(column), *(len(row[i]) for row in cells)) for i, column in enumerate(RANK_COLUMNS)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            value.ljust(width) if column == "device" else value.rjust(width)
            for column, value, width in zip(RANK_COLUMNS, values, widths)
        ).rstrip()

    return "\n".join([line(RANK_COLUMNS), *(line(row) for row in cells)])


BREAKDOWN_PARTS = (
    ("params_bytes", "parameters"),
    ("grads_bytes", "gradients"),
    ("optimizer_bytes", "optimizer state"),
    ("batch_bytes", "batch"),
    ("activations_bytes", "activations"),
)


def breakdown_lines(document: dict[str, Any]) -> list[str]:
    """The fullest measured step's memory by part (a data-parallel run's fullest rank's), and beside it the step as
    it was predicted (a watched run's, recorded in its process), told as the measured one was read
    (gpu_train_monitor.memory.like_measured)."""
    breakdowns = [b for b in document.get("memory_breakdowns") or () if all(key in b for key, _ in BREAKDOWN_PARTS)]
    if not breakdowns:
        return []
    measured = max(breakdowns, key=lambda b: sum(b[key] for key, _ in BREAKDOWN_PARTS))
    method = measured.get("method", "")
    how = {"allocator": "the allocator's peak", "saved-tensors": "the bytes autograd saved for backward"}.get(method)
    ranks = {b.get("rank", 0) for b in breakdowns}
    where = f"step {_step(measured)}" + (f", rank {measured.get('rank', 0)}" if len(ranks) > 1 else "")
    lines = [f"memory breakdown ({where}" + (f", activations from {how})" if how else ")")]
    prediction = next(
        (e for e in document.get("other_events") or () if e.get("kind") == "StepPredicted" and not e.get("reason")),
        None,
    )
    like = None
    if prediction is not None:
        predicted = SimpleNamespace(**{name: int(prediction.get(name) or 0) for name in PredictedStep.__annotations__})
        like = as_measured(predicted, SimpleNamespace(batch_bytes=int(measured["batch_bytes"]), method=method))
    total = sum(measured[key] for key, _ in BREAKDOWN_PARTS)
    lines.append(f"  {'':<17}{'measured':>12}" + (f"{'predicted':>12}" if like else ""))
    rows = [(name, measured[key], like.part(key) if like else None) for key, name in BREAKDOWN_PARTS]
    rows.append(("total", total, like.total_bytes if like else None))
    for name, value, predicted_value in rows:
        lines.append(
            f"  {name:<17}{format_bytes(value):>12}"
            + ("" if predicted_value is None else f"{format_bytes(predicted_value):>12}")
        )
    if like is not None and prediction is not None:
        error = error_percent(like.total_bytes, total)
        lines.append(
            f"  predicted at step {_step(prediction)}, {error:+.1f}% off: {printable(str(prediction.get('what', '')))}"
        )
    return lines


def _section(
    lines: list[str], title: str, entries: list[dict[str, Any]], text: Callable[[dict[str, Any]], str]
) -> None:
    if entries:
        lines.append(f"{title} ({len(entries)})")
        lines += [f"  {text(entry)}" for entry in entries]


def _step(entry: dict[str, Any]) -> str:
    return "-" if entry.get("step") is None else f"{entry['step']:,}"


def _epoch_line(e: dict[str, Any]) -> str:
    accuracy = e.get("val_accuracy")
    return (
        f"epoch {e.get('epoch')} at step {_step(e)}: train loss {_number(e.get('train_loss'), '.4f')}, "
        f"val loss {_number(e.get('val_loss'), '.4f')}, "
        f"val acc {'-' if accuracy is None else format(accuracy, '.2%')}"
    )


def _oom_line(e: dict[str, Any]) -> str:
    action = (
        f"batch {e.get('batch_size')} -> {e.get('new_batch_size')}"
        if e.get("action") == "shrink"
        else f"batch {e.get('batch_size')}, stopped"
    )
    line = f"step {_step(e)} ({e.get('phase', 'train')}): {action}: {e.get('message', '')}"
    fits = e.get("fits_batch")
    autopsy = event_text.autopsy_lines(
        modules_from_json(e.get("holders")),
        int(e.get("holders_total_bytes") or 0),
        str(e.get("holders_source") or ""),
        int(e.get("holders_step") or 0),
        int(fits) if isinstance(fits, int) else None,
    )
    return "; ".join([line, *autopsy])
