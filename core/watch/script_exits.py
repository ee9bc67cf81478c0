"""How a script under `gpu-train-monitor watch --` exits, for its run's ending: the code it gives `sys.exit()` (a
run whose script exits 3 is `failed` the moment it ends, in the words `watch` uses, never first `completed`: a
`watch --remote` following it would take that for success), an `os._exit()` (no exit handler runs: the run is ended
first, with the steps not yet reported), and the one way to die of a signal as a process dies of it bare.

`raise SystemExit(3)` itself is not seen (nothing runs between it and the exit handlers that could read its code):
`watch` then fails the run after the script's exit, as it fails one a killed script left running.
"""

from __future__ import annotations

import os
import signal
import sys
import weakref
from collections.abc import Callable
from typing import Any

_real_exit = os._exit  # the process's own, whatever is patched later


class ScriptExits:
    """`code`: the non-zero code the script last gave sys.exit() (None: none, or it went on training after);
    `on_os_exit(code)` runs before an os._exit() of this process."""

    def __init__(self, on_os_exit: Callable[[int], None]) -> None:
        self.on_os_exit = on_os_exit
        self.code: int | None = None
        self.pid = os.getpid()
        self._patched: list[tuple[Any, str, Any]] = []

    def install(self) -> ScriptExits:
        if self._patched:
            return self
        sys_exit, os_exit = sys.exit, os._exit
        ours = weakref.ref(self)  # a watch that is gone (a test's) is not kept alive by the patch

        def exit(status: Any = None) -> None:
            exits = ours()
            if exits is not None and os.getpid() == exits.pid:
                exits.code = exit_code(status) or None
            sys_exit(status)

        def _exit(status: int) -> None:
            exits = ours()
            if exits is not None and os.getpid() == exits.pid:
                try:
                    exits.on_os_exit(int(status))
                except BaseException:  # noqa: BLE001 - the exit asked for happens whatever ours did
                    pass
            os_exit(status)

        for owner, name, patched in ((sys, "exit", exit), (os, "_exit", _exit)):
            self._patched.append((owner, name, getattr(owner, name)))
            setattr(owner, name, patched)
        return self

    def uninstall(self) -> None:
        while self._patched:
            owner, name, original = self._patched.pop()
            setattr(owner, name, original)


def exit_code(status: Any) -> int:
    """The exit code Python gives `sys.exit(status)`: 0 for None, the number, else 1 (a message is printed)."""
    if status is None:
        return 0
    if isinstance(status, int):
        return status & 0xFF  # what the process's exit status keeps of it
    return 1


def die_of(signum: int) -> None:
    """End this process by `signum` as it would end bare (a shell says 128+N): its default action, raised again."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    _real_exit(128 + signum)  # only if the signal could not end it (blocked in this thread)
