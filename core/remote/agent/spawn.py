"""Processes the agent starts: detached from the SSH session, so that a dropped connection never stops them.

Each starts in a session of its own (setsid: no SIGHUP when the connection drops), with no stdin and its output
in `<store>-remote-logs/<uid>.log` beside the store (one folder per store: an agent of one store never sees another
store's runs and jobs); `<uid>.json` beside it says which process it is, so that another
agent (after a reconnect) can tell a run still starting (its process alive, nothing recorded yet) from one
that failed before it recorded anything (the log's last error line says why).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from ...base.errors import UserError
from ...base.text import Message
from ...distributed.env import ENV_RUN_UID, ENV_STOP_WITH_PID

LOG_FOLDER_SUFFIX = "-remote-logs"  # runs.sqlite3 -> runs.sqlite3-remote-logs/
UID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")  # a file name too: no separators, no leading dot
ERROR_PREFIX = "gpu-train-monitor: error: "


@dataclass(frozen=True)
class Launch:
    """A process the agent started for run `uid`."""

    uid: str
    pid: int
    started_at: float  # the process's create time: a reused pid is another process
    log: Path

    def alive(self) -> bool:
        try:
            process = psutil.Process(self.pid)
            return process.status() != psutil.STATUS_ZOMBIE and abs(process.create_time() - self.started_at) < 1.0
        except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
            return False

    def identified(self) -> bool:
        """Alive, and still the process started for this uid: the same start time, and the run's uid in its
        environment (where the spawner put it). A pid in a record is never signalled on its word alone."""
        return self.alive() and started_for(self.uid, self.pid)

    def process_of(self, pid: int) -> psutil.Process | None:
        """Process `pid` when it trains this launch's run: the launch itself or a process under it (the script a
        watch started, a data-parallel rank), started for the same uid; None for any other process."""
        if not self.identified() or not started_for(self.uid, pid):
            return None
        try:
            process = psutil.Process(pid)
            return process if pid == self.pid or self.pid in {parent.pid for parent in process.parents()} else None
        except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
            return None

    def last_error(self) -> str:
        """Why the process ended before recording: the CLI's error line, else the log's last line ('' if none)."""
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        lines = [line.strip() for line in re.split(r"[\r\n]+", text) if line.strip()]
        for line in reversed(lines):
            if line.startswith(ERROR_PREFIX):
                return line[len(ERROR_PREFIX) :]
        return lines[-1] if lines else ""


def started_for(uid: str, pid: int) -> bool:
    """Whether process `pid` was started for run `uid`: the uid is in the environment it was started with (our
    spawner and launchers hand it over as GPU_TRAIN_MONITOR_RUN_UID). False when it cannot be read."""
    try:
        return psutil.Process(pid).environ().get(ENV_RUN_UID) == uid
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, ValueError, OSError):
        return False


def check_uid(uid: str) -> str:
    """`uid` when it can name a run (and its log file); UserError otherwise."""
    if not UID_PATTERN.fullmatch(uid):
        raise UserError(
            Message(
                "uid: {uid} is not a run uid (letters, digits, '_', '-' and '.', at most 128, not starting with "
                "'.' or '-')",
                uid=repr(uid),
            )
        )
    return uid


def log_folder(store_path: Path) -> Path:
    """The folder of the processes started for the store at `store_path`: its own, beside it."""
    store = store_path.expanduser().resolve()
    return store.parent / f"{store.name}{LOG_FOLDER_SUFFIX}"


def launch_of(store_path: Path, uid: str) -> Launch | None:
    """The process an agent started for `uid`, from its record; None when no agent started one."""
    folder = log_folder(store_path)
    try:
        record = json.loads((folder / f"{uid}.json").read_text(encoding="utf-8"))
        return Launch(uid, int(record["pid"]), float(record["started_at"]), folder / f"{uid}.log")
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _environment(uid: str) -> dict[str, str]:
    """The agent's environment with output unbuffered, the run's uid handed over, and nothing that would tie the
    run's life to a window's (it must outlive the agent). PYTHONPATH is left as it is: the child is this
    interpreter and finds `gpu_train_monitor` where it is installed."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env.pop(ENV_STOP_WITH_PID, None)
    env[ENV_RUN_UID] = uid
    return env


class Spawner:
    """Starts detached processes and reaps those that end while the agent still runs (no zombies left)."""

    def __init__(self, store_path: Path) -> None:
        self.store_path = store_path
        self._children: list[subprocess.Popen[bytes]] = []
        self._lock = threading.Lock()

    def start(self, uid: str, args: list[str], cwd: Path | None = None) -> Launch:
        """Start `args` for run `uid`; UserError when it cannot be started or `uid` was started already."""
        if any("\x00" in arg for arg in args):  # the OS cannot take it: say so (before the uid is used up)
            raise UserError(Message("cannot start the run: a value or argument contains a NUL character"))
        folder = log_folder(self.store_path)
        log = folder / f"{uid}.log"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with open(log, "xb") as output:  # a uid is started once: a second start would mix two runs' logs
                output.write((" ".join(args) + "\n").encode("utf-8", errors="replace"))
                output.flush()
                child = subprocess.Popen(
                    args,
                    cwd=cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    env=_environment(uid),
                    start_new_session=True,
                )
        except FileExistsError:
            raise UserError(Message("a run with uid {uid} was started already", uid=uid)) from None
        except OSError as exc:
            raise UserError(Message("cannot start the run: {why}", why=exc.strerror or str(exc))) from None
        try:
            started_at = psutil.Process(child.pid).create_time()
        except psutil.Error:
            started_at = time.time()
        launch = Launch(uid, child.pid, started_at, log)
        record = {"pid": child.pid, "started_at": started_at, "args": args}
        (folder / f"{uid}.json").write_text(json.dumps(record) + "\n", encoding="utf-8")
        with self._lock:
            self._children.append(child)
        return launch

    def reap(self) -> None:
        """Collect the exit status of children that have ended (a zombie would look alive to `ps`)."""
        with self._lock:
            self._children = [child for child in self._children if child.poll() is None]
