"""Files a command writes for the user (summary JSON, finder JSON, memory snapshot, screenshot).

Paths are checked before any work, so a typo fails in a second rather than after a long run. Writes go
to a temporary file in the same folder that then replaces the target in one step (os.replace): a full
disk or a crash leaves the old file or none, never a truncated one. JSON is strict: NaN and infinity
(a diverged run's losses) become null, which every JSON reader accepts.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from core.message import Message


def check_output_path(field: str, path: str | os.PathLike[str]) -> None:
    """Raise ConfigError(field, ...) unless a file can be written at `path` now.

    Refuses a folder, a missing folder and a folder this process cannot create files in (probed by
    creating one: permission bits say nothing for root or a read-only file system). An existing
    device or pipe (/dev/stdout) is accepted when it opens for writing."""
    shown = os.fspath(path)
    target = Path(shown).expanduser()
    if target.is_dir():
        raise ConfigError(field, Message("{path} is a folder; give a file name", path=shown))
    if target.exists() and not target.is_file():  # a device or a pipe: written in place
        try:
            os.close(os.open(target, os.O_WRONLY | os.O_NONBLOCK))
        except OSError as exc:
            raise ConfigError(field, Message("cannot write to {path} ({why})", path=shown,
                                             why=exc.strerror or str(exc))) from None
        return
    real = Path(os.path.realpath(target))  # a link to a file: that file is replaced, the link kept
    if not real.parent.is_dir():
        raise ConfigError(field, Message("the folder for {path} does not exist", path=shown))
    probe = _temporary_name(real)
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as exc:
        raise ConfigError(field, Message("cannot write to {path} ({why})", path=shown,
                                         why=exc.strerror or str(exc))) from None
    _remove(probe)


def replace_atomically(path: str | os.PathLike[str], write: Callable[[Path], None]) -> None:
    """Call `write(temporary)`, flush it to disk, then rename it over `path`; OSError when that fails.

    The target is left as it was on any failure. Devices and pipes (/dev/stdout, /dev/full) cannot be
    renamed over, so `write` gets the path itself there."""
    target = Path(os.fspath(path)).expanduser()
    if target.exists() and not target.is_file() and not target.is_dir():
        write(target)
        return
    real = Path(os.path.realpath(target))
    temporary = _temporary_name(real)
    try:
        write(temporary)
        fd = os.open(temporary, os.O_RDWR)  # a full disk may only show here (delayed allocation)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, real)
    except BaseException:
        _remove(temporary)
        raise


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write `text` (UTF-8) to `path` atomically."""
    replace_atomically(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))


def strict_json(value: Any) -> Any:
    """`value` with every non-finite float (NaN, inf) replaced by None, in nested dicts, lists and tuples."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: strict_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(item) for item in value]
    return value


def write_json(path: str | os.PathLike[str], value: Any) -> None:
    """Write `value` as strict, indented JSON (non-finite floats as null) to `path`, atomically.

    allow_nan=False makes a non-finite number that strict_json missed an error here, not a file that
    strict readers reject."""
    write_text(path, json.dumps(strict_json(value), indent=2, allow_nan=False) + "\n")


def _temporary_name(target: Path) -> Path:
    """A hidden name beside `target` that keeps its suffix (image writers pick the format from it)."""
    return target.with_name(f".{target.name}.{secrets.token_hex(4)}.partial{target.suffix}")


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
