"""A recorded run's fields as the window shows them (the Runs tab, a run's own window, the delete dialog):
its state, when it ran, its title and figures, in the user's language and the locale's numbers."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QCoreApplication, QLocale

from gpu_train_monitor.gui.i18n.status_text import status_text
from gpu_train_monitor.gui.qt.locale_format import date_time, integer
from gpu_train_monitor.store.run_store import RunRow


def state_text(row: RunRow, own_pid: int | None = None) -> str:
    """'live' for a run training now ('live (this window)' for the window's own), else its status, in the
    user's language."""
    if row.live:  # a pid of another machine's is no process of this window, whatever its number
        if row.pid == (os.getpid() if own_pid is None else own_pid) and not elsewhere(row):
            return QCoreApplication.translate("run_row_text", "live (this window)")
        return QCoreApplication.translate("run_row_text", "live")
    return status_text(row.status)


def devices_text(row: RunRow, with_machine: bool = True) -> str:
    """The device, with a data-parallel run's process count: 'cuda:0', 'cpu ×2', and (`with_machine`) the
    machine where that is not this one (a run mirrored from a remote machine): 'cuda:0 on gpu-box (node7)' (the
    run's own window words it so; the Runs tab has the machine in a column of its own)."""
    device = row.device if row.world_size <= 1 else f"{row.device} ×{row.world_size}"
    if with_machine and elsewhere(row):
        return QCoreApplication.translate("run_row_text", "{device} on {host}").format(
            device=device, host=machine_text(row)
        )
    return device


def elsewhere(row: RunRow) -> bool:
    """Whether the run trained on another machine than this one (copied from it, or recorded there into a store
    this machine shares)."""
    return bool(row.origin) or bool(row.host and row.host != socket.gethostname())


def machine_text(row: RunRow) -> str:
    """The machine a run trained on: its host name, and for a run copied from another machine the name the user
    reached it by first, when that is another: 'gpu-box (node7)'; 'gpu-box' when both are the same."""
    if row.origin and row.origin != row.host:
        if not row.host:
            return row.origin
        return QCoreApplication.translate("run_row_text", "{alias} ({host})").format(alias=row.origin, host=row.host)
    return row.host


def when_text(started_at: float) -> str:
    """When a run started, the locale's short date and time."""
    return date_time(started_at)


def described_title(row: RunRow, script: str = "") -> str:
    """The run's name, else what it trained where ('#12 resnet18 on cuda:0', with a comparison's label), or for a
    watched script, that script (`script`: `script_text`'s 'train.py (~/proj)')."""
    if row.name:
        return row.name
    if script:
        return QCoreApplication.translate("run_row_text", "#{id} {script}: {model} on {device}").format(
            id=row.id, script=script, model=row.model, device=row.device
        )
    if row.label:
        return QCoreApplication.translate("run_row_text", "#{id} {model} on {device} ({label})").format(
            id=row.id, model=row.model, device=row.device, label=row.label
        )
    return QCoreApplication.translate("run_row_text", "#{id} {model} on {device}").format(
        id=row.id, model=row.model, device=row.device
    )


def run_title(row: RunRow, script: str = "") -> str:
    """'#12 baseline' once named ('#12 baseline — train.py (~/proj)' for a watched `script`), else '#12 resnet18 on
    cuda:0', '#12 train.py (~/proj): Sequential on cpu'."""
    if row.name and script:
        return QCoreApplication.translate("run_row_text", "#{id} {name} — {script}").format(
            id=row.id, name=row.name, script=script
        )
    return f"#{row.id} {row.name}" if row.name else described_title(row, script)


def window_title(row: RunRow, script: str = "") -> str:
    """What a run's own window is called (before its state): its title, and the machine it trained on when that
    is not this one ('#12 resnet18 on cuda:0 — gpu-box (node7)')."""
    title = run_title(row, script)
    if elsewhere(row):
        return QCoreApplication.translate("run_row_text", "{title} — {machine}").format(
            title=title, machine=machine_text(row)
        )
    return title


def run_text(row: RunRow, script: str = "") -> str:
    """'#12', '#12 baseline' once named, '#12 [placement=resident]' for a comparison's run, '#12 train.py (~/proj)'
    for a watched script's."""
    text = f"#{row.id}"
    if row.name:
        return f"{text} {row.name}"
    if script:
        return f"{text} {script}"
    return f"{text} [{row.label}]" if row.label else text


def script_text(row: RunRow, config: Mapping[str, Any]) -> str:
    """The script a watched run ran, from its config (gpu_train_monitor.watch.script.script_config: its path, the
    module of `python -m`): its name and its folder, 'train.py (~/proj)', 'pkg.train (~/proj)'; '' for any other
    run. A folder under this user's home is written from ~ when the run trained on this machine."""
    path = config.get("script")
    if row.placement or not isinstance(path, str) or not path:
        return ""
    module = config.get("module")
    name = module if isinstance(module, str) and module else os.path.basename(path) or path
    folder = os.path.dirname(path)
    home = os.path.expanduser("~")
    if not elsewhere(row) and home not in ("", "/") and (folder == home or folder.startswith(home + os.sep)):
        folder = "~" + folder[len(home) :]
    if not folder:
        return name
    return QCoreApplication.translate("run_row_text", "{script} ({folder})").format(script=name, folder=folder)


def steps_text(row: RunRow) -> str:
    steps = integer(row.steps)
    if row.steps == row.total_steps or not row.total_steps:  # 0: a watched script that gave no total
        return steps
    return f"{steps} / {integer(row.total_steps)}"


def last_loss_text(row: RunRow) -> str:
    """The run's last step's loss; 'nan' for a run that ended in one (the store keeps no value for it)."""
    if row.loss_last is None:
        return "nan" if row.status == "diverged" else "–"
    return loss_text(row.loss_last)


def loss_text(loss: float) -> str:
    """A loss with 4 significant digits (as Python's '.4g'), the locale's decimal point."""
    return QLocale().toString(float(loss), "g", 4)


def duration_text(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
