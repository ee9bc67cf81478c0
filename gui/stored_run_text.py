"""What a recorded run's window says: its header, how it ended and the events the live log does not word,
in the sentences of `core.event_text` where the live window has them, so a run reads the same watched live
or opened later."""

from __future__ import annotations

import dataclasses
import html
import json
import os
import time
from collections.abc import Mapping
from typing import Any

from core import event_text
from core.events import RunFinished
from core.run_store import RunRow
from core.summary import RunSummary
from gui.run_history import duration_text, run_title

FAILED = ("diverged", "oom", "failed")


def header_html(row: RunRow, shown: str, colour: str) -> str:
    """Title and status, the run's settings, and whether it is live and where it is controlled (a run
    training elsewhere is read-only here), else when it ran and by which process; its message and note."""
    lines = [f"<b>{html.escape(run_title(row))}</b> — <span style='color:{colour}'><b>{html.escape(shown)}</b></span>",
             html.escape(f"{row.model} on {row.dataset}, batch {row.batch_size}, {row.placement} placement, "
                         f"{row.devices}" + (f" ({row.device_name})" if row.device_name else ""))]
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row.started_at))
    if row.live:
        if row.pid == os.getpid():
            where = "this window's own run: control it with the window's Pause and Stop"
        else:
            where = (f"watching run {row.id} started by pid {row.pid} on {row.host}: read-only here, pause or "
                     "stop it where it runs (Ctrl+C in its terminal)")
        lines.append(html.escape(f"{where}; started {started}"))
    else:
        end = row.finished_at if row.finished_at is not None else row.heartbeat_at
        lines.append(html.escape(f"started {started}, ran {duration_text(end - row.started_at)}, recorded by pid "
                                 f"{row.pid} on {row.host}"))
        if row.message:
            lines.append(f"<span style='color:{colour}'>{html.escape(row.message)}</span>")
    if row.note:
        lines.append(f"<i>{html.escape(row.note)}</i>")
    return "<br>".join(lines)


def end_line(row: RunRow, summary: Mapping[str, Any] | None) -> tuple[str, str]:
    """How the run ended and the log level to show it at: the live log's words when it finished with a
    summary; where it stopped and why when it was interrupted."""
    run_summary = summary_of(summary)
    if run_summary is not None and row.status != "interrupted":
        text = event_text.run_finished(RunFinished(row.status, row.steps, row.message, False, run_summary))
    else:
        text = f"{row.status} at step {row.steps}" + (f": {row.message}" if row.message else "")
    return text, "error" if row.status in FAILED else "warning" if row.status == "interrupted" else "info"


def summary_of(values: Mapping[str, Any] | None) -> RunSummary | None:
    """The stored summary as a `RunSummary` (for `core.event_text`), None when absent or not understood."""
    if values is None:
        return None
    names = {f.name for f in dataclasses.fields(RunSummary)}
    fields = {key: value for key, value in values.items() if key in names}
    fields["batch_size_changes"] = tuple(fields.get("batch_size_changes") or ())
    if fields.get("samples_per_s_spread") is not None:
        fields["samples_per_s_spread"] = tuple(fields["samples_per_s_spread"])
    try:
        return RunSummary(**fields)
    except TypeError:
        return None


def plain_event_line(kind: str, data: Mapping[str, Any]) -> str:
    """Events the live log does not word: checkpoints, pauses and resumes; any other as its fields."""
    step = data.get("step")
    match kind:
        case "CheckpointSaved":
            return f"checkpoint saved at step {step} ({data.get('reason')}): {data.get('path')}"
        case "RunPaused":
            return f"paused at step {step}"
        case "RunResumed":
            return f"resumed at step {step}"
    return f"{kind}: {json.dumps(dict(data))}"


def log_line(at: float, text: str, level: str = "info") -> str:
    """A log line stamped with the time it was recorded (as `LogPanel.add` stamps the time it is shown)."""
    prefix = {"warning": "warning: ", "error": "ERROR: "}.get(level, "")
    return f"{time.strftime('%H:%M:%S', time.localtime(at))}  {prefix}{text}"
