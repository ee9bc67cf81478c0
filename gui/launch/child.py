"""The child process a data-parallel run from the window is: `python -m gpu_train_monitor run <the form's options>
--nproc N --runs-db <the window's store>` (or a watched script's, `gpu_train_monitor.gui.launch.watch_command`), how it
is started, its environment (which hands it the uid its run is recorded under), and what its output says once it has
ended without recording a run (the error that stopped it). No Qt here.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from gpu_train_monitor.cli.options import PROG

# the window's launcher imports it from here
from gpu_train_monitor.config.command_line import command_line as command_line
from gpu_train_monitor.distributed.env import ENV_RUN_UID, ENV_STOP_WITH_PID


def child_environment(run_uid: str) -> dict[str, str]:
    """The window's environment with output unbuffered, so the log shows each line as it is written; the child's
    launcher names its run `run_uid`, which is how the window finds it in the store. PYTHONPATH is left as it is:
    the child is this interpreter and finds `gpu_train_monitor` where it is installed, and a folder of ours on the
    path would hand a watched script our sub-packages (`config`, `data`, `model`...) for its own imports."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env[ENV_STOP_WITH_PID] = str(os.getpid())  # the launcher stops its ranks if this window dies, even by kill -9
    env[ENV_RUN_UID] = run_uid
    return env


def spawn(args: list[str], folder: Path | None, output_folder: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start `args` in `folder` (None: here) in a session of its own (a Ctrl+C to its group reaches it all, the
    window's own does not), its output in `output_folder`/output.log and its command line beside it; OSError
    when it cannot be started."""
    (output_folder / "command.txt").write_text(" ".join(args) + "\n", encoding="utf-8")
    with open(output_folder / "output.log", "wb") as log:
        return subprocess.Popen(
            args,
            cwd=folder,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )


def has_exited(process: subprocess.Popen[bytes]) -> bool:
    """Whether the child has exited, without reaping it: its pid (its process group's id) stays ours until
    whatever it left has been killed."""
    if hasattr(os, "waitid"):
        try:
            return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:  # reaped already
            return True
    return process.poll() is not None


def read_output(path: Path | None) -> str:
    """The child's output so far ("" when there is none to read)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path else ""
    except OSError:
        return ""


def last_error_line(text: str) -> str:
    """The line to show for a child that failed before recording: the CLI's own error (without its program
    prefix), else the last line that is not a progress bar's, a rule or a traceback's frame; "" when there is
    none. The child's own words, as it wrote them (English: the CLI's output is)."""
    lines = [line.strip() for line in re.split(r"[\r\n]+", text) if line.strip()]
    for line in reversed(lines):
        if line.startswith(f"{PROG}: error: "):
            return line[len(f"{PROG}: error: ") :]
    for line in reversed(lines):
        if (
            set(line) <= set("=-_* ")
            or line.startswith(('File "', "Traceback", "^"))
            or "it/s]" in line
            or "step/s]" in line
        ):
            continue
        return line
    return ""
