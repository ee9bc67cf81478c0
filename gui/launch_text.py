"""What the window's log says about a data-parallel run it launched, in the user's language (Qt's translator,
context "launch_text"): one whole sentence per case, GPUs or CPU processes, with the locale's numbers. The
child's error line and the run's stored message are shown as they were written.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication

from gui.launch_end import LaunchEnd
from gui.qt.locale_format import number
from gui.i18n.status_text import status_text


def starting_text(nproc: int, gpus: bool, batch_size: int, output: Path | None) -> str:
    """The run's processes are starting: how many, how the batch splits, where their output goes."""
    values = dict(count=nproc, batch_size=batch_size, share=batch_size // nproc, path=output)
    if gpus:
        return QCoreApplication.translate(
            "launch_text", "starting {count} GPUs, data-parallel (batch {batch_size} split {share} per process); "
                           "their output: {path}").format(**values)
    return QCoreApplication.translate(
        "launch_text", "starting {count} CPU processes, data-parallel (batch {batch_size} split {share} per "
                       "process); their output: {path}").format(**values)


def recording_text(run_id: int, after_s: float | None) -> str:
    """Rank 0 has recorded the run (`after_s` seconds after Start, when known)."""
    if after_s is None:
        return QCoreApplication.translate(
            "launch_text", "recording as run {run_id}; followed live in its own window (Runs tab). Stop, Pause and "
                           "Clear cache act on it").format(run_id=run_id)
    return QCoreApplication.translate(
        "launch_text", "recording as run {run_id} ({seconds} s after Start); followed live in its own window (Runs "
                       "tab). Stop, Pause and Clear cache act on it").format(run_id=run_id, seconds=number(after_s, 1))


def paused_text(run_id: int | None, paused: bool) -> str:
    if paused:
        return QCoreApplication.translate("launch_text", "run {run_id} paused").format(run_id=run_id)
    return QCoreApplication.translate("launch_text", "run {run_id} resumed").format(run_id=run_id)


def end_text(end: LaunchEnd, nproc: int, gpus: bool) -> str:
    """How the launch ended: stopped or failed before the run was recorded (the processes named), else the
    recorded run's status and message."""
    count = nproc
    if end.run_id is None and end.status == "stopped":
        if gpus:
            return QCoreApplication.translate(
                "launch_text", "the {count} GPUs were stopped before training started").format(count=count)
        return QCoreApplication.translate(
            "launch_text", "the {count} CPU processes were stopped before training started").format(count=count)
    if end.run_id is None:
        if gpus:
            return QCoreApplication.translate("launch_text", "the {count} GPUs could not start: {reason}").format(
                count=count, reason=end.message)
        return QCoreApplication.translate("launch_text", "the {count} CPU processes could not start: {reason}").format(
            count=count, reason=end.message)
    if end.missing:
        return QCoreApplication.translate(
            "launch_text", "run {run_id} is no longer in the run store (deleted while it trained, or the store was "
                           "replaced); its processes have ended (exit code {code})").format(
            run_id=end.run_id, code=end.exit_code)
    status = status_text(end.status)
    if end.message:
        return QCoreApplication.translate("launch_text", "run {run_id} {status}: {message}").format(
            run_id=end.run_id, status=status, message=end.message)
    return QCoreApplication.translate("launch_text", "run {run_id} {status}").format(run_id=end.run_id, status=status)


def output_text(output: Path) -> str:
    return QCoreApplication.translate("launch_text", "the processes' output is in {path}").format(path=output)


def stopping_text(nproc: int, gpus: bool) -> str:
    """The closing window waits for the run's processes ('the run' before any was started)."""
    if not nproc:
        return QCoreApplication.translate("launch_text", "Stopping the run…")
    if gpus:
        return QCoreApplication.translate("launch_text", "Stopping {count} GPUs…").format(count=nproc)
    return QCoreApplication.translate("launch_text", "Stopping {count} CPU processes…").format(count=nproc)
