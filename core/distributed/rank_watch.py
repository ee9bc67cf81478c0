"""The launcher's own watch over its ranks, and what it leaves on disk.

torch's launcher stops the other ranks when one fails, but a rank that does not answer its SIGTERM (hung in a
collective, stopped) gets 30 s more before SIGKILL, whatever the launch configuration says. `RankWatch` keeps
the promise of `SHUTDOWN_TIMEOUT_S`: once any rank has ended, the others have that long to end, then they are
killed. Ranks end together (they stop at the same step), so a healthy run never meets it.

The launcher's folders (where ranks say how they ended, torch's per-rank error files) carry the launcher's pid
in their name, so that a launcher killed before it could remove its own has its folder removed by the next one.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path

import psutil

from .env import ENV_RUN_UID

FOLDER_PREFIX = "gpu-train-monitor-ranks-"
WATCH_INTERVAL_S = 0.2
_OWNED_FOLDER = re.compile(re.escape(FOLDER_PREFIX) + r"(\d+)-")


def make_rank_folder() -> str:
    """A new folder for one launch, named after this process; leftovers of launchers that died are removed."""
    remove_orphan_folders()
    return tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-")


def remove_orphan_folders(root: str | None = None) -> list[str]:
    """Remove the folders of launchers that are gone (killed before they could remove their own); the removed."""
    root = root or tempfile.gettempdir()
    removed = []
    try:
        names = os.listdir(root)
    except OSError:
        return removed
    for name in names:
        owner = _OWNED_FOLDER.match(name)
        if owner is None or psutil.pid_exists(int(owner.group(1))):
            continue
        path = os.path.join(root, name)
        with contextlib.suppress(OSError):
            if os.stat(path).st_uid == os.getuid():
                shutil.rmtree(path)
                removed.append(path)
    return removed


def quiet_launcher_logs() -> None:
    """torch's launcher logs each stop and failure as warnings with its own tracebacks ("Terminating process",
    "Received 15 death signal"): the run's end is said once, in one line that names the rank. Its modules set
    their loggers' levels themselves, so each is quietened, not only the parent."""
    import torch.distributed.elastic.agent.server.local_elastic_agent  # imported: their loggers exist now
    import torch.distributed.elastic.multiprocessing.api
    import torch.multiprocessing.spawn  # noqa: F401

    for name in list(logging.root.manager.loggerDict):
        if name.startswith(("torch.distributed.elastic", "torch.multiprocessing")):
            logging.getLogger(name).setLevel(logging.CRITICAL)


class RankWatch:
    """While the ranks of run `uid` run: once one has ended, kill those still running `grace_s` later."""

    def __init__(self, uid: str, grace_s: float) -> None:
        self.uid, self.grace_s = uid, grace_s
        self.killed: list[int] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="rank-watch", daemon=True)

    def __enter__(self) -> RankWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(timeout=5)

    def _watch(self) -> None:
        workers: dict[int, psutil.Process] = {}
        first_end: float | None = None
        while not self._done.wait(WATCH_INTERVAL_S):
            self._add_new_workers(workers)
            alive = [worker for worker in workers.values() if _running(worker)]
            if first_end is None and len(alive) < len(workers):
                first_end = time.monotonic()
            if first_end is not None and alive and time.monotonic() - first_end > self.grace_s:
                for worker in alive:
                    with contextlib.suppress(psutil.Error):
                        worker.send_signal(signal.SIGKILL)
                        self.killed.append(worker.pid)

    def _add_new_workers(self, workers: dict[int, psutil.Process]) -> None:
        """This process's children that are ranks of this run (spawned with its uid in their environment)."""
        try:
            children = psutil.Process().children()
        except psutil.Error:
            return
        for child in children:
            if child.pid in workers:
                continue
            with contextlib.suppress(psutil.Error):
                if "spawn_main" in " ".join(child.cmdline()) and child.environ().get(ENV_RUN_UID) == self.uid:
                    workers[child.pid] = child


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def torch_log_folder(rank_folder: str) -> str:
    """Where torch's launcher keeps its per-rank files: inside the launch's own folder (it would otherwise
    make a /tmp/torchelastic_* folder per run and never remove it)."""
    return str(Path(rank_folder, "torchelastic"))
