"""Reading a `torch.cuda.memory._dump_snapshot` pickle from any machine, safely and without torch.

A snapshot is plain data: dicts, lists, tuples, strings, numbers, booleans and None. Unpickling anything else
means running code the file names (a pickle can call any importable function), so the loader is a
`pickle.Unpickler` whose `find_class` refuses every global: a file that asks for one is refused before anything
runs. What loads is then checked for the shape torch writes (`segments`, `device_traces`), so a pickle of some
other data is told apart from a snapshot in one line.
"""

from __future__ import annotations

import gc
import io
import os
import pickle
import stat
from pathlib import Path
from typing import Any

from ..base.errors import UserError
from ..base.text import Message


class SnapshotError(UserError):
    """A file that cannot be read as a memory snapshot: missing, unreadable, not a snapshot, or unsafe."""


class _Refused(pickle.UnpicklingError):
    """The file named a global (or a persistent id): what it would have loaded, never loaded."""


class _PlainDataUnpickler(pickle.Unpickler):
    """Builds only the pickle format's own types; any class or function the file names is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise _Refused(f"{module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        raise _Refused("a persistent id")


def load_plain_pickle(path: str | os.PathLike[str]) -> Any:
    """The data in the pickle at `path`; `SnapshotError` (one line) for a file that cannot be read, is not a
    pickle, or asks to load a Python object (refused before it runs)."""
    where = str(path)
    try:
        info = os.stat(where)
    except OSError as exc:
        raise SnapshotError(
            Message("memory snapshot {path}: {why}", path=where, why=exc.strerror or str(exc))
        ) from None
    if not stat.S_ISREG(info.st_mode):  # a FIFO would block in open(), a folder is no file
        raise SnapshotError(Message("memory snapshot {path}: not a regular file", path=where))
    try:
        data = Path(where).read_bytes()
    except OSError as exc:
        raise SnapshotError(
            Message("memory snapshot {path}: {why}", path=where, why=exc.strerror or str(exc))
        ) from None
    collecting = gc.isenabled()
    gc.disable()  # a million small dicts would trigger the cyclic collector over and over: 3x the load time
    try:
        return _PlainDataUnpickler(io.BytesIO(data)).load()
    except _Refused as exc:
        raise SnapshotError(
            Message(
                "memory snapshot {path}: refused: the file asks to load Python code ({what}), which a snapshot "
                "never holds; nothing was run",
                path=where,
                what=str(exc)[:200],
            )
        ) from None
    except (
        pickle.UnpicklingError,
        EOFError,
        ValueError,
        TypeError,
        IndexError,
        KeyError,
        AttributeError,
        MemoryError,
        RecursionError,
    ):
        raise _not_a_snapshot(where, Message("not a pickle, or a truncated one")) from None
    finally:
        if collecting:
            gc.enable()


def _not_a_snapshot(path: str, why: str) -> SnapshotError:
    return SnapshotError(Message("memory snapshot {path}: {why}", path=path, why=why))


def check_snapshot(data: Any, path: str) -> dict[str, Any]:
    """`data` as a snapshot dict, or `SnapshotError` naming what is missing."""
    if not isinstance(data, dict) or not isinstance(data.get("segments"), list):
        raise _not_a_snapshot(
            path,
            Message("not a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot writes one: it has segments)"),
        )
    traces = data.get("device_traces", [])
    if not isinstance(traces, list) or not all(isinstance(trace, list) for trace in traces):
        raise _not_a_snapshot(path, Message("its device_traces is not a list of event lists"))
    return data


def read_snapshot_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The snapshot at `path` as torch wrote it (plain data), checked for its shape."""
    return check_snapshot(load_plain_pickle(path), str(path))
