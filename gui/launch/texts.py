"""What the window says about a data-parallel run it launched, in the user's language: how it ended, from
what the run store and the child's output say (`launch_end`, Qt context "launch_end"), and the log's
sentences about it (Qt context "launch_text"), one whole sentence per case, GPUs or CPU processes, with the
locale's numbers. The child's own error line and the run's stored message are shown as they were written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QCoreApplication

from gpu_train_monitor.gui.i18n.status_text import status_text
from gpu_train_monitor.gui.launch.child import last_error_line
from gpu_train_monitor.gui.qt.locale_format import number
from gpu_train_monitor.store.run_store import RunRow


@dataclass(frozen=True)
class LaunchEnd:
    """How a launched run ended: the run's final status (completed, stopped, ..., or failed when it ended
    before it was recorded or without finishing its row), a one-line message, and its id when recorded."""

    status: str
    message: str
    run_id: int | None
    exit_code: int
    missing: bool = False  # recorded as `run_id`, then not found in the store (deleted, or the store replaced)


def launch_end(
    row: RunRow | None, run_id: int | None, code: int, killed: int, stop_requested: bool, log_text: Callable[[], str]
) -> LaunchEnd:
    """The end of a child that exited with `code`, its run's last row `row` (None when never recorded or not
    read), `killed` leftover processes killed after it, whether Stop (or a close) was asked, and its output
    (read only when needed: a long run's log is long)."""
    translate = QCoreApplication.translate
    if row is None and stop_requested:  # Stop (or a close) while the ranks started up
        return LaunchEnd("stopped", translate("launch_end", "stopped before training started"), run_id, code)
    if row is None:
        message = error_line(log_text()) if code else translate("launch_end", "it ended before its run was recorded")
        return LaunchEnd("failed", message, run_id, code)
    if row.status == "running":  # killed before it could finish its row
        return LaunchEnd(
            "failed",
            translate(
                "launch_end",
                "its processes were killed (exit code {code}) before the run finished; steps up to the "
                "last report are kept",
            ).format(code=code),
            row.id,
            code,
        )
    message = row.message or ("" if code == 0 else error_line(log_text()))
    return LaunchEnd(row.status, with_leftovers(message, killed), row.id, code)


def error_line(output: str) -> str:
    """The child's last error line, or a sentence saying it left none."""
    return last_error_line(output) or QCoreApplication.translate(
        "launch_end", "it ended before recording anything, without a message"
    )


def with_leftovers(message: str, killed: int) -> str:
    """`message`, then how many processes the run left behind were killed (if any)."""
    translate = QCoreApplication.translate
    if not killed:
        return message
    if message:
        if killed == 1:
            return translate("launch_end", "{message}; 1 leftover process killed").format(message=message)
        return translate("launch_end", "{message}; {count} leftover processes killed").format(
            message=message, count=killed
        )
    if killed == 1:
        return translate("launch_end", "1 leftover process killed")
    return translate("launch_end", "{count} leftover processes killed").format(count=killed)


def starting_text(nproc: int, gpus: bool, batch_size: int, output: Path | None) -> str:
    """The run's processes are starting: how many, how the batch splits, where their output goes."""
    values = dict(count=nproc, batch_size=batch_size, share=batch_size // nproc, path=output)
    if gpus:
        return QCoreApplication.translate(
            "launch_text",
            "starting {count} GPUs, data-parallel (batch {batch_size} split {share} per process); their output: {path}",
        ).format(**values)
    return QCoreApplication.translate(
        "launch_text",
        "starting {count} CPU processes, data-parallel (batch {batch_size} split {share} per "
        "process); their output: {path}",
    ).format(**values)


def recording_text(run_id: int, after_s: float | None) -> str:
    """Rank 0 has recorded the run (`after_s` seconds after Start, when known)."""
    if after_s is None:
        return QCoreApplication.translate(
            "launch_text",
            "recording as run {run_id}; followed live in its own window (Runs tab). Stop, Pause and "
            "Clear cache act on it",
        ).format(run_id=run_id)
    return QCoreApplication.translate(
        "launch_text",
        "recording as run {run_id} ({seconds} s after Start); followed live in its own window (Runs "
        "tab). Stop, Pause and Clear cache act on it",
    ).format(run_id=run_id, seconds=number(after_s, 1))


def paused_text(run_id: int | None, paused: bool) -> str:
    if paused:
        return QCoreApplication.translate("launch_text", "run {run_id} paused").format(run_id=run_id)
    return QCoreApplication.translate("launch_text", "run {run_id} resumed").format(run_id=run_id)


def watching_text(script: Path, folder: Path, output: Path | None) -> str:
    """A watched script is starting (File ▸ Watch a script…)."""
    return QCoreApplication.translate(
        "launch_text", "watching {script}, started in {folder}; its output: {path}"
    ).format(script=script, folder=folder, path=output)


def script_output_text(output: Path) -> str:
    return QCoreApplication.translate("launch_text", "the script's output is in {path}").format(path=output)


def end_text(end: LaunchEnd, nproc: int, gpus: bool, script: bool = False) -> str:
    """How the launch ended: stopped or failed before the run was recorded (the processes, or the watched
    `script`, named), else the recorded run's status and message."""
    count = nproc
    if script and end.run_id is None and end.status == "stopped":
        return QCoreApplication.translate("launch_text", "the script was stopped before its run was recorded")
    if script and end.run_id is None and end.exit_code == 0:
        return QCoreApplication.translate(
            "launch_text", "the script ended without an optimizer step: there was no training to record"
        )
    if script and end.run_id is None:
        return QCoreApplication.translate(
            "launch_text", "the script ended before its run was recorded: {reason}"
        ).format(reason=end.message)
    if end.run_id is None and end.status == "stopped":
        if gpus:
            return QCoreApplication.translate(
                "launch_text", "the {count} GPUs were stopped before training started"
            ).format(count=count)
        return QCoreApplication.translate(
            "launch_text", "the {count} CPU processes were stopped before training started"
        ).format(count=count)
    if end.run_id is None:
        if gpus:
            return QCoreApplication.translate("launch_text", "the {count} GPUs could not start: {reason}").format(
                count=count, reason=end.message
            )
        return QCoreApplication.translate("launch_text", "the {count} CPU processes could not start: {reason}").format(
            count=count, reason=end.message
        )
    if end.missing:
        return QCoreApplication.translate(
            "launch_text",
            "run {run_id} is no longer in the run store (deleted while it trained, or the store was "
            "replaced); its processes have ended (exit code {code})",
        ).format(run_id=end.run_id, code=end.exit_code)
    status = status_text(end.status)
    if end.message:
        return QCoreApplication.translate("launch_text", "run {run_id} {status}: {message}").format(
            run_id=end.run_id, status=status, message=end.message
        )
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


def remote_starting_text(host: str, device: str, output: Path | None) -> str:
    """A run of the form's settings is starting on the machine connected to."""
    return QCoreApplication.translate(
        "launch_text", "starting on {host} ({device}), mirrored here as it trains; the link's output: {path}"
    ).format(host=host, device=device, path=output)


def remote_end_text(end: LaunchEnd, host: str) -> str | None:
    """How a run on `host` ended before it was recorded (None once recorded: `end_text` says it as for any run)."""
    if end.run_id is not None:
        return None
    if end.status == "stopped":
        return QCoreApplication.translate(
            "launch_text", "the run on {host} was stopped before training started"
        ).format(host=host)
    return QCoreApplication.translate("launch_text", "the run on {host} could not start: {reason}").format(
        host=host, reason=end.message
    )


def remote_watching_text(script: str, host: str, output: Path | None) -> str:
    """A watched script is starting on the machine connected to."""
    return QCoreApplication.translate(
        "launch_text", "watching {script} on {host}, mirrored here as it trains; the link's output: {path}"
    ).format(script=script, host=host, path=output)
