"""A recorded run's fields as the window shows them (the Runs tab, a run's own window, the delete dialog):
its state, when it ran, its title and figures, in the user's language and the locale's numbers."""

from __future__ import annotations

import os
import socket

from PySide6.QtCore import QCoreApplication, QLocale

from gpu_train_monitor.gui.i18n.status_text import status_text
from gpu_train_monitor.gui.qt.locale_format import date_time, integer
from gpu_train_monitor.store.run_store import RunRow


def state_text(row: RunRow, own_pid: int | None = None) -> str:
    """'live' for a run training now ('live (this window)' for the window's own), else its status, in the
    user's language."""
    if row.live:
        if row.pid == (os.getpid() if own_pid is None else own_pid):
            return QCoreApplication.translate("run_row_text", "live (this window)")
        return QCoreApplication.translate("run_row_text", "live")
    return status_text(row.status)


def devices_text(row: RunRow) -> str:
    """The device, with a data-parallel run's process count: 'cuda:0', 'cpu ×2', and the machine where that is
    not this one (a run mirrored from a remote machine): 'cuda:0 on gpu-box' (the Runs tab and the run's own
    window word it alike)."""
    device = row.device if row.world_size <= 1 else f"{row.device} ×{row.world_size}"
    if row.host and row.host != socket.gethostname():
        return QCoreApplication.translate("run_row_text", "{device} on {host}").format(device=device, host=row.host)
    return device


def when_text(started_at: float) -> str:
    """When a run started, the locale's short date and time."""
    return date_time(started_at)


def described_title(row: RunRow) -> str:
    """The run's name, else what it trained where ('#12 resnet18 on cuda:0', with a comparison's label)."""
    if row.name:
        return row.name
    if row.label:
        return QCoreApplication.translate("run_row_text", "#{id} {model} on {device} ({label})").format(
            id=row.id, model=row.model, device=row.device, label=row.label
        )
    return QCoreApplication.translate("run_row_text", "#{id} {model} on {device}").format(
        id=row.id, model=row.model, device=row.device
    )


def run_title(row: RunRow) -> str:
    """'#12 baseline' once named, else '#12 resnet18 on cuda:0'."""
    return f"#{row.id} {row.name}" if row.name else described_title(row)


def run_text(row: RunRow) -> str:
    """'#12', '#12 baseline' once named, '#12 [placement=resident]' for a comparison's run."""
    text = f"#{row.id}"
    if row.name:
        return f"{text} {row.name}"
    return f"{text} [{row.label}]" if row.label else text


def steps_text(row: RunRow) -> str:
    steps = integer(row.steps)
    if row.steps == row.total_steps or not row.total_steps:  # 0: a watched script that gave no total
        return steps
    return f"{steps} / {integer(row.total_steps)}"


def loss_text(loss: float) -> str:
    """A loss with 4 significant digits (as Python's '.4g'), the locale's decimal point."""
    return QLocale().toString(float(loss), "g", 4)


def duration_text(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
