"""`gpu-train-monitor watch [--name N] [--runs-db P] -- python train.py ARGS`: an unchanged script, recorded.

The command after `--` runs as it would alone (its own stdin, stdout, stderr, folder and exit code), with our
start-up folder first on PYTHONPATH (gpu_train_monitor.watch.startup: its `sitecustomize` installs the watch once the
script imports torch) and the run's uid in GPU_TRAIN_MONITOR_RUN_UID (a window passes its own, to find the run).

While it runs, a terminal's Ctrl+C reaches the script itself (it is in the terminal's process group): this
process ignores SIGINT and forwards SIGTERM, SIGUSR1 and SIGUSR2. Once it has exited, the store is told what
the script could not record: a run left `running` (killed -9, os._exit) ends `interrupted` after a signal and
`failed` after a non-zero exit code, and a run recorded `completed` by a script that then exited non-zero
(sys.exit(3)) ends `failed`. A script that recorded nothing says why in the last line: its own error when it
died of one before its first step (a syntax error, a missing file: its start-up code writes the exception to a
file this process reads), else its exit code.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..base.text import Message, printable
from ..distributed.env import ENV_RUN_UID
from ..distributed.launcher import stop_with_window
from ..events.status import EXIT_USER_ERROR, Status
from ..store.files import ENV_PATH, default_store_path
from ..watch.startup import ENV_SCRIPT_ERROR, ENV_WATCH_NAME, SITE_FOLDER
from .options import PROG
from .remote_options import add_remote_watch_options
from .watched_script import PYTHON

FORWARDED = ("SIGTERM", "SIGUSR1", "SIGUSR2")  # by name: Windows has no SIGUSR1 / SIGUSR2
PYTHON_LONG_OPTIONS_WITH_VALUE = ("--check-hash-based-pycs",)
NOTHING_RECORDED = "no optimizer step was seen: nothing recorded"


def add_watch_parser(sub: Any) -> None:
    watch = sub.add_parser(
        "watch",
        help="run a training script unchanged and record it: watch -- python train.py ARGS",
        description="Run a PyTorch training script unchanged and record its optimizer steps, losses and memory in "
        "the run store, where the window follows it live. The script's output and exit code pass through.",
        epilog="example: gpu-train-monitor watch --name baseline -- python train.py --lr 3e-4 "
        "(or -- python -m package.train ...). Exit code: the script's (128+N when signal N ended it); "
        f"{EXIT_USER_ERROR} when there is no command or no such script.",
    )
    watch.add_argument("--name", default="", help="the run's name in the store (default: none)")
    watch.add_argument(
        "--runs-db",
        metavar="PATH",
        help="the run store (SQLite) to record into (default: $GPU_TRAIN_MONITOR_RUNS_DB, else runs/runs.sqlite3 "
        "in the user data folder); the window shows its runs",
    )
    add_remote_watch_options(watch)
    watch.add_argument("child", nargs=argparse.REMAINDER, metavar="COMMAND", help="the command to run, after --")


def command_watch(args: argparse.Namespace) -> int:
    command = list(args.child)
    if command[:1] == ["--"]:
        command = command[1:]
    remote_options = ("remote", "agent_command", "remote_cwd")  # without --remote: refused there, not ignored
    if any(getattr(args, name, None) for name in remote_options):  # the script runs on another machine
        from .remote_commands import command_watch_remote

        return command_watch_remote(args, command)
    problem = command_problem(command)
    if problem is not None:
        print(f"{PROG} watch: error: {problem}", file=sys.stderr)
        return EXIT_USER_ERROR
    store_path = Path(args.runs_db).expanduser().resolve() if args.runs_db else default_store_path()
    run_uid = os.environ.get(ENV_RUN_UID) or uuid.uuid4().hex
    stop_with_window()  # a window that started this watch and dies sends it SIGTERM, which reaches the script
    with tempfile.TemporaryDirectory(prefix="gpu-train-monitor-watch-") as folder:
        error_file = Path(folder) / "error.txt"  # the script's error, written by its start-up code if it dies of one
        env = child_environment(run_uid, store_path, args.name, error_file)
        try:
            process = subprocess.Popen(command, env=env)
        except OSError as exc:
            print(f"{PROG} watch: error: cannot run {command[0]}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_USER_ERROR
        with signals_for_the_child(process):
            returncode = process.wait()
        code = 128 - returncode if returncode < 0 else returncode
        if not settle_run(store_path, run_uid, returncode):
            print(nothing_recorded(code, script_error(error_file)), file=sys.stderr)
    return code


def script_error(path: Path) -> str:
    """The exception the script died of, in one line ("" when none was written)."""
    try:
        return printable(path.read_text(encoding="utf-8", errors="replace").strip())
    except OSError:
        return ""


def nothing_recorded(code: int, error: str) -> str:
    """The last line of a watch that recorded nothing: why, in the script's own words when it failed (a syntax
    error, a missing file), so that the terminal's and the window's last line is the script's error."""
    if error and code:
        return f"{PROG}: error: the script failed before its first optimizer step, nothing recorded: {error}"
    if code:
        return f"{PROG}: error: the script exited with code {code} before its first optimizer step: nothing recorded"
    return f"{PROG}: {NOTHING_RECORDED}"


def command_problem(command: list[str]) -> str | None:
    """Why the command cannot run (one sentence), or None: nothing to run, no such program, no such script."""
    if not command:
        return "give the command to run after --, e.g. gpu-train-monitor watch -- python train.py"
    program = command[0]
    if os.sep not in program and shutil.which(program) is None:
        if program.endswith(".py") and os.path.isfile(program):
            return f"{program} is a script: run it as watch -- python {program}"
        return f"there is no program {program}"
    if os.sep in program and not os.path.isfile(program):
        return f"there is no program {program}"
    if PYTHON.match(os.path.basename(program)):
        script = python_script(command[1:])
        if script is not None and script != "-" and not os.path.exists(script):
            return f"there is no script {script}"
    return None


def python_script(arguments: list[str]) -> str | None:
    """The script a Python command line runs; None for `-m module`, `-c code` or none (an interactive one)."""
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        index += 1
        if argument == "-" or not argument.startswith("-"):
            return argument
        if argument.startswith("--"):
            if argument in PYTHON_LONG_OPTIONS_WITH_VALUE:
                index += 1
            continue
        for position, flag in enumerate(argument[1:], start=1):  # a cluster of flags, e.g. -u, -OO, -um, -Wignore
            if flag in "mc":
                return None
            if flag in "WX":
                if position == len(argument) - 1:
                    index += 1  # the value is the next argument
                break
    return None


def child_environment(run_uid: str, store_path: Path, name: str, error_file: Path | None = None) -> dict[str, str]:
    """Our environment, with the start-up folder first on PYTHONPATH and what it reads."""
    env = dict(os.environ)
    env.pop(ENV_SCRIPT_ERROR, None)
    if error_file is not None:
        env[ENV_SCRIPT_ERROR] = str(error_file)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(SITE_FOLDER) + (os.pathsep + path if path else "")
    env[ENV_RUN_UID] = run_uid
    env[ENV_PATH] = str(store_path)
    if name:
        env[ENV_WATCH_NAME] = name
    else:
        env.pop(ENV_WATCH_NAME, None)
    return env


@contextlib.contextmanager
def signals_for_the_child(process: subprocess.Popen) -> Iterator[None]:
    """Ctrl+C is the child's alone (the terminal sends it to the whole group); SIGTERM, SIGUSR1 and SIGUSR2
    sent to this process (a window, a job scheduler) go on to the child. Restored after."""

    def forward(signum: int, frame: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signum)

    previous: dict[int, Any] = {signal.SIGINT: signal.signal(signal.SIGINT, signal.SIG_IGN)}
    try:
        for name in FORWARDED:
            number = getattr(signal, name, None)
            if number is not None:
                previous[number] = signal.signal(number, forward)
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def settle_run(store_path: Path, run_uid: str, returncode: int) -> bool:
    """Finish in the store what the script could not; whether it recorded a run at all (a store that cannot be
    opened: True, the script said why already)."""
    if not store_path.exists():
        return False
    from ..store.run_store import RunStore, StoreError

    try:
        with RunStore(store_path) as store:  # opening it marks a run whose process is gone `interrupted`
            run_id = store.find_uid(run_uid)
            if run_id is None:
                return False
            status = store.run(run_id).status
            if returncode > 0 and status in (Status.RUNNING, Status.INTERRUPTED, Status.COMPLETED):
                # SCRIPT_EXITED's words (gpu_train_monitor.cli.watched_script), spelt out for the translation catalogue
                store.record_failure(run_uid, Message("the script exited with code {code}", code=returncode))
    except StoreError:
        pass
    return True
