"""Where the run store lives, and which paths can be one: told before SQLite opens anything.

The default store has a folder of its own in the user's data folder (see `default_store_path`). A folder,
FIFO, device or socket given as the store is refused by name; the -wal and -shm that SQLite makes beside a
read-only store are kept writable by their owner.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from ..base.text import Message

ENV_PATH = "GPU_TRAIN_MONITOR_RUNS_DB"


class NotAFile(Exception):
    """The store's path is a folder, a FIFO, a device or a socket; the message says which."""


def default_store_path() -> Path:
    """$GPU_TRAIN_MONITOR_RUNS_DB, else runs/runs.sqlite3 in the per-user data folder.

    The store has a folder of its own because a file dialog browsing a folder (Qt opens and closes the
    files it lists) drops this process's SQLite locks on every file there, and another process closing the
    store then deletes its -wal and -shm under the window; the data folder's `checkpoints/` is where Resume's
    dialog opens, so its parent must not hold the store. A store at the old place (the data folder itself)
    is moved in once, when the new one does not exist yet, so that no recorded run disappears from view."""
    if os.environ.get(ENV_PATH):
        return Path(os.environ[ENV_PATH]).expanduser()
    from platformdirs import user_data_dir

    data = Path(user_data_dir("gpu-train-monitor"))
    return _moved_in(data / "runs.sqlite3", data / "runs" / "runs.sqlite3")


def _moved_in(old: Path, new: Path) -> Path:
    """Move the store at `old` (with its -wal and -shm) to `new` unless `new` exists; returns where it is.
    The -wal and -shm go first and the store last, so a move cut short is finished by the next call and a
    store never arrives without its WAL's committed runs. Renaming keeps the files themselves: a process
    that still has the old store open keeps writing into the moved one. If the move fails (another user's
    folder, Windows refusing a file in use), the store is used where it is."""
    if new.exists() or not old.is_file():
        return new
    try:
        new.parent.mkdir(parents=True, exist_ok=True)
        for suffix in ("-wal", "-shm"):
            sidecar, target = Path(f"{old}{suffix}"), Path(f"{new}{suffix}")
            if sidecar.exists() and not target.exists():
                os.replace(sidecar, target)
        os.replace(old, new)
    except OSError:
        return old
    return new


def refuse_special_file(path: Path) -> None:
    """NotAFile for a folder, FIFO, device or socket, told before SQLite opens it: SQLite blocks for good
    reading a FIFO (deaf to Ctrl+C and SIGTERM) and writes a -journal beside a device (/dev/null-journal)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # a new file, or one SQLite reports on
    if stat.S_ISDIR(mode):
        raise NotAFile(
            Message(
                "the run store {path} is a folder; give --runs-db a file name, such as {example}",
                path=str(path),
                example=str(path / "runs.sqlite3"),
            )
        )
    if not stat.S_ISREG(mode):
        kind = (
            Message("a named pipe (FIFO)")
            if stat.S_ISFIFO(mode)
            else Message("a socket")
            if stat.S_ISSOCK(mode)
            else Message("a device")
        )
        raise NotAFile(
            Message("the run store {path} is {kind}, not a file; give --runs-db a file name", path=str(path), kind=kind)
        )


def writable_sidecars(path: Path) -> None:
    """SQLite creates the store's -wal and -shm with the store file's permissions. Those of a read-only store
    would stay read-only after the store is made writable again (chmod 644): SQLite then opens the -shm
    read-only and every write fails. Their owner keeps write permission on them."""
    for sidecar in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        with contextlib.suppress(OSError):  # absent, or another user's
            mode = sidecar.stat().st_mode
            if not mode & stat.S_IWUSR:
                sidecar.chmod(stat.S_IMODE(mode) | stat.S_IWUSR)
