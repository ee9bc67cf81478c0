"""A recorded run as a TensorBoard event file (needs the tensorboard package, the `tensorboard` extra).

Each run goes to a folder of its own under the log dir, `run-<id>`, so that `tensorboard --logdir DIR` shows
several exported runs side by side; exporting a run again replaces its event file. Scalars are written at
the run's real step numbers with the time each was measured as their wall time, under these tags:

  loss/train, loss/smoothed                 every step (smoothed: the loss plot's EMA)
  loss/train_epoch, loss/val, accuracy/val  at each epoch's end (what the run measured)
  throughput/images_per_s, train/batch_size every report
  memory/<figure>_MB                        every report, in MB (10^6 bytes, as the app shows them):
                                            allocated, reserved, peak_allocated, peak_reserved, capacity,
                                            process_rss, and device_used where the device reports it
  throughput/images_per_s/rank<r>,          a data-parallel run, every report: each rank's own images/s and
  memory/<figure>_MB/rank<r>                memory (the untagged series are the whole run's images/s and
                                            rank 0's memory); under the same section as the run's own, so
                                            TensorBoard draws a rank's curve beside the run's

and a text summary `run` (the run's facts and configuration) on TensorBoard's Text tab.

Written with the tensorboard package's record writer: one event holds all the values of a step (or of a
report), where torch's SummaryWriter writes one event per value through a queue to a thread. TensorBoard
checksums every record in pure Python, so a 200,000-step run with 20,000 reports is 220,000 records instead
of 580,000; measured on a busy 2-core machine: ~20 s and ~100 MB instead of 104 s and 680 MB.
"""

from __future__ import annotations

import importlib
import json
import os
import secrets
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..base.errors import UserError
from ..base.text import Message
from ..events.events import SAMPLE_COLUMNS
from ..store.run_store import EventRow, RankReportRow, ReportRow, RunRow
from .step_table import StepTable

INSTALL_HINT = 'pip install "gpu-train-monitor[tensorboard]"'
EVENT_FILE_PREFIX = "events.out.tfevents."
MB = 1e6
UNSHOWN_FACTS = ("uid", "live", "started_at", "finished_at", "heartbeat_at")  # ids and Unix times: `started` says it


def check_tensorboard() -> None:
    """A UserError saying how to install the tensorboard package, unless it can be imported."""
    try:
        importlib.import_module("tensorboard.summary.writer.record_writer")
    except ImportError:
        raise UserError(
            Message("the TensorBoard export needs the tensorboard package: {hint}", hint=INSTALL_HINT)
        ) from None


def write_run_tensorboard(
    logdir: Path,
    row: RunRow,
    table: StepTable,
    reports: Sequence[ReportRow],
    epochs: Sequence[EventRow],
    text: str,
    rank_reports: Sequence[RankReportRow] = (),
) -> list[Path]:
    """Write run `row`'s event file into `logdir`/run-<id> (created; `logdir` exists); its path.
    `rank_reports`: a data-parallel run's per-rank samples, written with the report of their step.

    The records go to a hidden file that TensorBoard ignores (its name lacks "tfevents"), renamed into place
    once complete: a failure leaves the previous export as it was, and a TensorBoard watching the log dir
    never reads half a file. Written in this thread: the writer's own thread only made it slower."""
    check_tensorboard()
    from tensorboard.summary.writer.record_writer import RecordWriter

    target = logdir / f"run-{row.id}"
    target.mkdir(exist_ok=True)
    final = target / f"{EVENT_FILE_PREFIX}{int(row.started_at):010d}.{row.host}.{row.pid}.0"
    partial = target / f".export-{secrets.token_hex(4)}.partial"
    try:
        with open(partial, "wb") as handle:
            writer = RecordWriter(handle)
            for event in _events(row, table, reports, epochs, text, rank_reports):
                writer.write(event.SerializeToString())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, final)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    for old in target.glob(EVENT_FILE_PREFIX + "*"):  # an earlier export of this run under another name
        if old != final:
            old.unlink()
    return [final]


def _events(
    row: RunRow,
    table: StepTable,
    reports: Sequence[ReportRow],
    epochs: Sequence[EventRow],
    text: str,
    rank_reports: Sequence[RankReportRow],
) -> Iterable[Any]:
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary

    def event(step: int, at: float, values: Iterable[tuple[str, float]]) -> Event:
        return Event(
            step=step,
            wall_time=at,
            summary=Summary(value=[Summary.Value(tag=tag, simple_value=value) for tag, value in values]),
        )

    yield Event(wall_time=row.started_at, file_version="brain.Event:2")  # what every event file starts with
    yield _text_event(row, text)
    for step, loss, smoothed, at in zip(
        table.steps.tolist(), table.losses.tolist(), table.smoothed.tolist(), table.unix_time.tolist()
    ):
        yield event(step, at, (("loss/train", loss), ("loss/smoothed", smoothed)))
    for epoch in epochs:
        values = [
            (tag, float(epoch.data[key]))
            for tag, key in (
                ("loss/train_epoch", "train_loss"),
                ("loss/val", "val_loss"),
                ("accuracy/val", "val_accuracy"),
            )
            if epoch.data.get(key) is not None
        ]
        if values:
            yield event(epoch.data.get("step", epoch.step), epoch.at, values)
    ranks_at: dict[int, list[RankReportRow]] = {}
    for rank_report in rank_reports:
        ranks_at.setdefault(rank_report.step, []).append(rank_report)
    for r in reports:
        values = [_throughput(row, r.samples_per_s), ("train/batch_size", r.batch_size), *_memory(r)]
        for rank in ranks_at.get(r.step, ()):
            if rank.samples_per_s is not None:
                values.append((f"throughput/images_per_s/rank{rank.rank}", rank.samples_per_s))
            values += _memory(rank, f"/rank{rank.rank}")
        yield event(r.step, r.at, values)


def _throughput(row: RunRow, samples_per_s: float) -> tuple[str, float]:
    """throughput/images_per_s, or a text run's throughput/tokens_per_s (samples/s x its seq_len)."""
    unit = row.throughput
    if unit.tokens:
        return "throughput/tokens_per_s", samples_per_s * unit.per_sample
    return "throughput/images_per_s", samples_per_s


def _memory(sample: ReportRow | RankReportRow, suffix: str = "") -> list[tuple[str, float]]:
    """The sample's memory figures (`SAMPLE_COLUMNS`) in MB, tagged memory/<figure>_MB<suffix> (device_used only
    where known)."""
    return [
        (f"memory/{name.removesuffix('_bytes')}_MB{suffix}", value / MB)
        for name in SAMPLE_COLUMNS
        if (value := getattr(sample, name)) is not None
    ]


def _text_event(row: RunRow, text: str) -> Any:
    """The Markdown `text` as the text plugin's summary (a string tensor), as torch's SummaryWriter.add_text
    writes it."""
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

    metadata = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(
            plugin_name="text", content=TextPluginData(version=0).SerializeToString()
        )
    )
    tensor = TensorProto(
        dtype="DT_STRING",
        string_val=[text.encode("utf-8")],
        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]),
    )
    return Event(
        step=0,
        wall_time=row.started_at,
        summary=Summary(value=[Summary.Value(tag="run/text_summary", metadata=metadata, tensor=tensor)]),
    )


def run_text(facts: dict[str, Any], config: dict[str, Any]) -> str:
    """The run's facts and configuration as Markdown tables, for TensorBoard's Text tab."""
    lines = ["| | |", "|---|---|"]
    lines += [
        f"| {key} | {_cell(value)} |"
        for key, value in facts.items()
        if value not in (None, "") and key not in UNSHOWN_FACTS and (key, value) != ("world_size", 1)
    ]
    lines += ["", "**configuration**", "", "| | |", "|---|---|"]
    lines += [f"| {key} | {_cell(value)} |" for key, value in config.items()]
    return "\n".join(lines)


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text.replace("|", "\\|").replace("\n", " ")
