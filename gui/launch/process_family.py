"""A child process and every descendant seen since it started, so that none outlives it: the elastic launcher
may start ranks in sessions of their own, out of the child's process group, and a rank's own children stay
with it. No Qt here.
"""

from __future__ import annotations

import os
import signal

import psutil


class ProcessFamily:
    """The processes seen under one child, alive or not, by pid (psutil checks a pid was not reused)."""

    def __init__(self) -> None:
        self._seen: dict[int, psutil.Process] = {}

    def collect(self, root_pid: int) -> None:
        """Add the child `root_pid` and its descendants as they are now, and those of every member alive."""
        try:
            root = psutil.Process(root_pid)
            found = [root, *root.children(recursive=True)]
        except psutil.Error:
            found = []
        for process in found:
            self._seen.setdefault(process.pid, process)
        for process in list(self._seen.values()):  # a rank in a session of its own keeps its children there
            if alive(process):
                try:
                    for child in process.children(recursive=True):
                        self._seen.setdefault(child.pid, child)
                except psutil.Error:
                    continue

    def alive_pids(self) -> set[int]:
        """The pids of the members still running (as of the last `collect`'s list)."""
        return {pid for pid, process in self._seen.items() if alive(process)}

    def processes(self) -> list[psutil.Process]:
        """Every member seen, alive or not."""
        return list(self._seen.values())

    def kill(self, root_pid: int) -> int:
        """Kill the child's process group and every descendant seen still running; how many were killed
        (beside the child itself, whose pid stays ours until it is reaped)."""
        self.collect(root_pid)
        left = [p for pid, p in self._seen.items() if pid != root_pid and alive(p)]
        signal_group(root_pid, signal.SIGKILL)
        for process in left:
            try:
                process.kill()  # psutil checks it is the same process, not a reused pid
            except psutil.Error:
                continue
        psutil.wait_procs(left, timeout=5)
        return len(left)


def alive(process: psutil.Process) -> bool:
    """Running and not a zombie."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def signal_group(pgid: int, number: int) -> None:
    """Send signal `number` to process group `pgid`; a group that is gone (or not ours) is left alone."""
    try:
        os.killpg(pgid, number)
    except (ProcessLookupError, PermissionError):
        pass
