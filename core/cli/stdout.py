"""The command line's output: stdout that fails without a traceback, and JSON files beside it.

A reader that left (`| head`), a closed stdout (`>&-`) or a full disk (`> /dev/full`) ends a command with
exit 1 and at most one line, as Python's documentation advises for SIGPIPE.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any

from ..base.outputs import write_json
from ..config.run_config import option_name
from .options import PROG


class StdoutFailed(Exception):
    """Writing to stdout failed: its reader left (| head) or its file cannot grow (> /dev/full)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


def out(text: str) -> None:
    """print() to stdout; a failure there becomes StdoutFailed, which main() reports without a traceback."""
    if sys.stdout is None:  # started with stdout closed (`>&-`): print() would drop the text without a word
        raise StdoutFailed(OSError(errno.EBADF, os.strerror(errno.EBADF)))
    try:
        print(text)
    except OSError as exc:
        raise StdoutFailed(exc) from exc


def flush_stdout() -> None:
    if sys.stdout is None:  # closed from the start, and nothing was written to it (out() raises first)
        return
    try:
        sys.stdout.flush()
    except OSError as exc:
        raise StdoutFailed(exc) from exc


def stdout_gone(exc: OSError) -> int:
    """Exit 1 without a traceback, as Python's documentation advises for SIGPIPE: point stdout at devnull so
    the interpreter's last flush succeeds. A reader that left (| head) needs no message; a full disk does."""
    if not isinstance(exc, BrokenPipeError):
        print(f"{PROG}: error: cannot write to stdout ({exc.strerror or exc})", file=sys.stderr)
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # a stdout without a file descriptor (a test's capture)
        pass
    return 1


def save_json(field: str, path: str | None, value: Any, what: str) -> str | None:
    """Write `value` to `path` (atomically); the error line to print when that failed, else None."""
    if not path:
        return None
    try:
        write_json(path, value)
    except OSError as exc:
        return (
            f"{PROG}: error: {option_name(field)}: could not save to {path} ({exc.strerror or exc}); "
            f"the {what} is on stdout"
        )
    return None
