"""A recorded run as TensorBoard event files, written with torch's SummaryWriter (needs the tensorboard package).

Each run goes to a folder of its own under the log dir, `run-<id>`, so that `tensorboard --logdir DIR` shows
several exported runs side by side; exporting a run again replaces its event file. Scalars are written at
the run's real step numbers with the time each was measured as their wall time, under these tags:

  loss/train, loss/smoothed                 every step (smoothed: the loss plot's EMA)
  loss/train_epoch, loss/val, accuracy/val  at each epoch's end (what the run measured)
  throughput/images_per_s, train/batch_size every report
  memory/<figure>_MB                        every report, in MB (10^6 bytes, as the app shows them):
                                            allocated, reserved, peak_allocated, peak_reserved, capacity,
                                            process_rss, and device_used where the device reports it

and a text summary `run` (the run's facts and configuration) on TensorBoard's Text tab. Writing costs
about 40 µs a scalar (TensorBoard checksums each record in Python): ~1 s per 10,000 steps.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.errors import UserError
from core.run_series import StepTable
from core.run_store import EventRow, ReportRow, RunRow

INSTALL_HINT = 'pip install "gpu-train-monitor[tensorboard]"'
EVENT_FILE_PREFIX = "events.out.tfevents."
MEMORY_FIGURES = ("allocated", "reserved", "peak_allocated", "peak_reserved", "capacity", "process_rss",
                  "device_used")
MB = 1e6
UNSHOWN_FACTS = ("uid", "live", "started_at", "finished_at", "heartbeat_at")  # ids and Unix times: `started` says it


def summary_writer_class() -> Any:
    """torch's SummaryWriter, or a UserError saying how to install what it needs."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        raise UserError(f"the TensorBoard export needs the tensorboard package: {INSTALL_HINT}") from None
    return SummaryWriter


def write_run_tensorboard(logdir: Path, row: RunRow, table: StepTable, reports: Sequence[ReportRow],
                          epochs: Sequence[EventRow], text: str) -> list[Path]:
    """Write run `row`'s event file into `logdir`/run-<id> (created; `logdir` exists); its path.

    The file is written in a temporary folder beside it and moved in once complete, so a failure leaves
    the previous export as it was."""
    writer_class = summary_writer_class()
    target = logdir / f"run-{row.id}"
    staging = Path(tempfile.mkdtemp(prefix=f".run-{row.id}.", suffix=".partial", dir=logdir))
    try:
        writer = writer_class(log_dir=str(staging), max_queue=100_000, flush_secs=3600)
        try:
            _write_scalars(writer, table, reports, epochs)
            writer.add_text("run", text, global_step=0, walltime=row.started_at)
        finally:
            writer.close()
        written = sorted(staging.glob(EVENT_FILE_PREFIX + "*"))
        target.mkdir(exist_ok=True)
        for old in target.glob(EVENT_FILE_PREFIX + "*"):  # the previous export of this run
            old.unlink()
        moved = [Path(shutil.move(str(path), str(target / path.name))) for path in written]
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return moved


def _write_scalars(writer: Any, table: StepTable, reports: Sequence[ReportRow], epochs: Sequence[EventRow]) -> None:
    add = writer.add_scalar
    for step, loss, smoothed, at in zip(table.steps.tolist(), table.losses.tolist(), table.smoothed.tolist(),
                                        table.unix_time.tolist()):
        add("loss/train", loss, step, walltime=at)
        add("loss/smoothed", smoothed, step, walltime=at)
    for event in epochs:
        step = event.data.get("step", event.step)
        for tag, key in (("loss/train_epoch", "train_loss"), ("loss/val", "val_loss"), ("accuracy/val", "val_accuracy")):
            if event.data.get(key) is not None:
                add(tag, float(event.data[key]), step, walltime=event.at)
    for r in reports:
        add("throughput/images_per_s", r.samples_per_s, r.step, walltime=r.at)
        add("train/batch_size", r.batch_size, r.step, walltime=r.at)
        for figure in MEMORY_FIGURES:
            value = getattr(r, f"{figure}_bytes")
            if value is not None:
                add(f"memory/{figure}_MB", value / MB, r.step, walltime=r.at)


def run_text(facts: dict[str, Any], config: dict[str, Any]) -> str:
    """The run's facts and configuration as Markdown tables, for TensorBoard's Text tab."""
    lines = ["| | |", "|---|---|"]
    lines += [f"| {key} | {_cell(value)} |" for key, value in facts.items()
              if value not in (None, "") and key not in UNSHOWN_FACTS]
    lines += ["", "**configuration**", "", "| | |", "|---|---|"]
    lines += [f"| {key} | {_cell(value)} |" for key, value in config.items()]
    return "\n".join(lines)


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text.replace("|", "\\|").replace("\n", " ")
