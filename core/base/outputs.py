"""Files a command writes for the user (summary JSON, finder JSON, memory snapshot, screenshot, exports).

Paths are checked before any work, so a typo fails in a second rather than after a long run. An output
may never be a file the command reads or keeps (the run store and its -wal/-shm/-journal, a checkpoint
being resumed, a dataset's file, your model's code) nor another output: `check_distinct_outputs` is the
one rule, with "the same file" meaning the same file however it is spelled (relative, absolute, through
a symbolic or a hard link). Writes go
to a temporary file in the same folder that then replaces the target in one step (os.replace): a full
disk or a crash leaves the old file or none, never a truncated one. JSON is strict: NaN and infinity
(a diverged run's losses) become null, which every JSON reader accepts.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .text import Message


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
            raise ConfigError(
                field, Message("cannot write to {path} ({why})", path=shown, why=exc.strerror or str(exc))
            ) from None
        return
    real = Path(os.path.realpath(target))  # a link to a file: that file is replaced, the link kept
    if not real.parent.is_dir():
        raise ConfigError(field, Message("the folder for {path} does not exist", path=shown))
    probe = _temporary_name(real)
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as exc:
        raise ConfigError(
            field, Message("cannot write to {path} ({why})", path=shown, why=exc.strerror or str(exc))
        ) from None
    _remove(probe)


STORE_COMPANIONS = ("-wal", "-shm", "-journal")  # the files SQLite keeps beside a store


@dataclass(frozen=True)
class Protected:
    """Files no output may replace: what they are (for people) and the option that named them ('' when none
    did: the default store, the window's). A folder among `paths` protects every file already in it."""

    what: Message
    option: str
    paths: tuple[Path, ...]
    part: bool = False  # the paths belong to what the option names (a store's companions, a dataset's files)


def same_file(first: str | os.PathLike[str], second: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file: os.path.samefile where both exist (hard links too), else the same
    resolved path (symbolic links, `..`, relative against absolute) for a file still to be created."""
    a, b = Path(os.fspath(first)).expanduser(), Path(os.fspath(second)).expanduser()
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return os.path.realpath(a) == os.path.realpath(b)


def store_protection(path: str | os.PathLike[str], option: str = "") -> list[Protected]:
    """The run store at `path` and the files SQLite keeps beside it."""
    base = os.fspath(Path(os.fspath(path)).expanduser())
    return [
        Protected(Message("the run store"), option, (Path(base),)),
        Protected(
            Message("the run store"), option, tuple(Path(base + suffix) for suffix in STORE_COMPANIONS), part=True
        ),
    ]


def check_distinct_outputs(
    outputs: Mapping[str, str | os.PathLike[str] | None], protected: Iterable[Protected] = ()
) -> None:
    """ConfigError naming the output's field (and the other option) when an output would replace a protected
    file or is another output's file. Devices and pipes (/dev/null, /dev/stdout) are written in place, never
    replaced: they may be given more than once."""
    guards = list(protected)
    given = [(field, os.fspath(path)) for field, path in outputs.items() if path]
    for index, (field, shown) in enumerate(given):
        target = Path(shown).expanduser()
        if target.exists() and not target.is_file() and not target.is_dir():
            continue
        for other_field, other in given[:index]:
            if same_file(target, other):
                raise ConfigError(
                    field,
                    Message(
                        "{path} is also given to {option}; give each output a file of its own",
                        path=shown,
                        option=_option(other_field),
                    ),
                )
        for guard in guards:
            if any(_replaces(target, kept) for kept in guard.paths):
                raise ConfigError(field, _clash(shown, guard))


def _option(field: str) -> str:
    return "--" + field.replace("_", "-")


def _replaces(target: Path, kept: Path) -> bool:
    """Whether writing `target` replaces `kept`, or a file already inside `kept` when that is a folder."""
    if kept.is_dir():
        if not target.is_file():
            return False
        real, folder = Path(os.path.realpath(target)), Path(os.path.realpath(kept))
        return real == folder or folder in real.parents
    return same_file(target, kept)


def _clash(shown: str, guard: Protected) -> Message:
    if guard.option and guard.part:
        return Message(
            "{path} is a file of {option} ({what}); give another path", path=shown, option=guard.option, what=guard.what
        )
    if guard.option:
        return Message(
            "{path} is the same file as {option} ({what}); give another path",
            path=shown,
            option=guard.option,
            what=guard.what,
        )
    if guard.part:
        return Message("{path} is a file of {what}; give another path", path=shown, what=guard.what)
    return Message("{path} is {what}; give another path", path=shown, what=guard.what)


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
