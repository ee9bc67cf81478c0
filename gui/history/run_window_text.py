"""What a recorded run's window says: its header and how it ended, in the sentences of
`gpu_train_monitor.events.event_text` where the live window has them, so a run reads the same watched live or opened
later (its events: `gpu_train_monitor.gui.views.event_display`). Everything is in the user's language: core's sentences
through `gpu_train_monitor.gui.qt.core_text`, the window's own through Qt's translator (context "stored_run_text"); what
the store kept as plain text (a run's message, its note) is shown as it was written."""

from __future__ import annotations

import dataclasses
import html
import os
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QCoreApplication

from gpu_train_monitor.events import event_text
from gpu_train_monitor.events.events import RunFinished
from gpu_train_monitor.events.status import Status
from gpu_train_monitor.events.summary import RunSummary
from gpu_train_monitor.gui.history.row_text import (
    devices_text,
    duration_text,
    elsewhere,
    machine_text,
    run_title,
    window_title,
)
from gpu_train_monitor.gui.i18n.status_text import status_text
from gpu_train_monitor.gui.qt.core_text import choice_text, core_text
from gpu_train_monitor.gui.qt.locale_format import date_time, integer
from gpu_train_monitor.gui.views.step_phase_text import split_line, stored_phases, verdict_line
from gpu_train_monitor.store.run_store import RunRow


def watched_settings_text(row: RunRow) -> str:
    """'Net, trained by its own loop (the watch API), cpu (the device's name)': a watched run has none of our
    data, batch or placement settings."""
    source = core_text(event_text.WATCHED_SOURCES.get(row.dataset, row.dataset))
    if row.device_name:
        return QCoreApplication.translate(
            "stored_run_text", "{model}, trained by {source}, {devices} ({device_name})"
        ).format(model=row.model, source=source, devices=devices_text(row), device_name=row.device_name)
    return QCoreApplication.translate("stored_run_text", "{model}, trained by {source}, {devices}").format(
        model=row.model, source=source, devices=devices_text(row)
    )


def settings_text(row: RunRow) -> str:
    """'tiny-cnn on synthetic, batch 32, stream placement, cpu (the device's name)'; a text run's batch says its
    sequence length ('batch 128 x 256 tokens')."""
    if not row.placement:  # a watched run (gpu_train_monitor.watch)
        return watched_settings_text(row)
    if row.device_name:
        return QCoreApplication.translate(
            "stored_run_text",
            "{model} on {dataset}, batch {batch_size}, {placement} placement, {devices} ({device_name})",
        ).format(
            model=row.model,
            dataset=choice_text("dataset", row.dataset),
            batch_size=batch_text(row),
            placement=choice_text("placement", row.placement),
            devices=devices_text(row),
            device_name=row.device_name,
        )
    return QCoreApplication.translate(
        "stored_run_text", "{model} on {dataset}, batch {batch_size}, {placement} placement, {devices}"
    ).format(
        model=row.model,
        dataset=choice_text("dataset", row.dataset),
        batch_size=batch_text(row),
        placement=choice_text("placement", row.placement),
        devices=devices_text(row),
    )


def batch_text(row: RunRow) -> str:
    """'32' images a step, or a text run's '128 x 256 tokens' (sequences x sequence length)."""
    if not row.throughput.tokens or row.tokens_per_sample <= 1:
        return str(row.batch_size)
    return QCoreApplication.translate("stored_run_text", "{batch_size} x {seq_len} tokens").format(
        batch_size=row.batch_size, seq_len=row.tokens_per_sample
    )


def clears_cache(row: RunRow) -> bool:
    """Whether Clear cache can do anything for the run: its device has a caching allocator (CUDA, MPS), not the
    CPU, whose memory is the process's own."""
    return row.device.split(":")[0] in ("cuda", "mps")


def launched_text(row: RunRow) -> str:
    """Who started a run this window launched, and what its own window's buttons can do there (Clear cache only
    where there is a cache to clear)."""
    if not row.placement:  # a script the window watches (File ▸ Watch a script…)
        who = QCoreApplication.translate("stored_run_text", "a script this window started and watches")
    elif row.world_size > 1:
        who = QCoreApplication.translate("stored_run_text", "started by this window as {count} processes").format(
            count=integer(row.world_size)
        )
    else:
        who = QCoreApplication.translate("stored_run_text", "started by this window")
    if clears_cache(row):
        how = QCoreApplication.translate(
            "stored_run_text", "stop, pause or clear its cache here or with the window's buttons"
        )
    else:
        how = QCoreApplication.translate("stored_run_text", "stop or pause it here or with the window's buttons")
    return QCoreApplication.translate("stored_run_text", "{who}: {how}").format(who=who, how=how)


def where_text(row: RunRow, launched: bool = False) -> str:
    """Whether the run is live and where it is controlled (a run training elsewhere is read-only here; one this
    window `launched` is controlled from it), else when it ran and by which process."""
    started = date_time(row.started_at, seconds=True)
    if row.live and launched:
        return QCoreApplication.translate("stored_run_text", "{launched}; started {started}").format(
            launched=launched_text(row), started=started
        )
    if row.live and row.pid == os.getpid() and not elsewhere(row):
        return QCoreApplication.translate(
            "stored_run_text", "this window's own run: control it with the window's Pause and Stop; started {started}"
        ).format(started=started)
    if row.live:
        return QCoreApplication.translate(
            "stored_run_text",
            "watching run {run_id} started by pid {pid} on {host}: read-only here, pause or stop "
            "it where it runs (Ctrl+C in its terminal); started {started}",
        ).format(run_id=row.id, pid=row.pid, host=machine_text(row), started=started)
    end = row.finished_at if row.finished_at is not None else row.heartbeat_at
    return QCoreApplication.translate(
        "stored_run_text", "started {started}, ran {duration}, recorded by pid {pid} on {host}"
    ).format(started=started, duration=duration_text(end - row.started_at), pid=row.pid, host=machine_text(row))


def header_html(row: RunRow, shown: str, colour: str, launched: bool = False, script: str = "") -> str:
    """Title and status, the run's settings, and whether it is live and where it is controlled, else when it
    ran and by which process; its message and note. `script`: a watched script's name and folder."""
    lines = [
        f"<b>{html.escape(run_title(row, script))}</b> — "
        f"<span style='color:{colour}'><b>{html.escape(shown)}</b></span>",
        html.escape(settings_text(row)),
        html.escape(where_text(row, launched)),
    ]
    if not row.live and row.message:
        lines.append(f"<span style='color:{colour}'>{html.escape(core_text(row.message))}</span>")
    if row.note:
        lines.append(f"<i>{html.escape(row.note)}</i>")
    return "<br>".join(lines)


def end_line(row: RunRow, summary: Mapping[str, Any] | None) -> tuple[str, str]:
    """How the run ended and the log level to show it at: the live log's words when it finished with a
    summary; where it stopped and why when it was interrupted."""
    run_summary = summary_of(summary)
    if run_summary is not None and row.status != Status.INTERRUPTED:
        text = core_text(event_text.run_finished(RunFinished(row.status, row.steps, row.message, False, run_summary)))
    elif row.message:
        text = QCoreApplication.translate("stored_run_text", "{status} at step {step}: {message}").format(
            status=status_text(row.status), step=integer(row.steps), message=core_text(row.message)
        )
    else:
        text = QCoreApplication.translate("stored_run_text", "{status} at step {step}").format(
            status=status_text(row.status), step=integer(row.steps)
        )
    status = Status.of(row.status)
    if status is not None and status.failed:
        return text, "error"
    return text, "warning" if status is Status.INTERRUPTED else "info"


def summary_of(values: Mapping[str, Any] | None) -> RunSummary | None:
    """The stored summary as a `RunSummary` (for `gpu_train_monitor.events.event_text`), None when absent or not
    understood."""
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


def shown_summary(summary: Mapping[str, Any], status: str) -> dict[str, Any]:
    """The stored summary as the Config tab lists it: its status in words, and where a step's time went and what
    bounds it in the user's language (recomputed from the stored split, not the English stored beside it)."""
    shown = dict(summary, status=status)
    phases = stored_phases(shown)
    for field in ("step_phases_s", "verdict", "verdict_text"):
        shown.pop(field, None)
    if phases is not None:
        shown["step_phases_s"], shown["verdict"] = split_line(phases), verdict_line(phases)
    return shown


def titled(row: RunRow, script: str, state: str) -> str:
    """The run window's title: what the run is, where it trained and its state."""
    return QCoreApplication.translate("StoredRunView", "{title} ({state}) — GPU Training Monitor").format(
        title=window_title(row, script), state=state
    )
