"""Ctrl+C and SIGTERM for the window's process, at every stage: while Qt loads (recorded, then acted on),
while the window is open (closed the way its close button closes it; a second signal exits at once), and
after it has gone (Python's own behaviour again). Exit codes are the CLI's: 130 for Ctrl+C, 143 for SIGTERM.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

from gpu_train_monitor.cli.options import PROG
from gpu_train_monitor.events.status import EXIT_INTERRUPTED, EXIT_TERMINATED


def in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()  # signal.signal works only there


def deferred_signals() -> list[int]:
    """Record Ctrl+C and SIGTERM instead of raising while Qt's modules load: interrupting a C extension
    while it initialises can abort the interpreter. The list fills as signals come."""
    pending: list[int] = []
    for signum in (signal.SIGINT, signal.SIGTERM) if in_main_thread() else ():
        signal.signal(signum, lambda received, frame: pending.append(received))
    return pending


def end_on_signals(app, window, exit_code: list[int], pending: list[int]) -> None:
    """Ctrl+C (130) and SIGTERM (143) close the window the way its close button does (a run is stopped
    first); a second one exits at once. `pending` holds signals that came while Qt was loading.

    The close is queued, not done in the handler: a handler runs between any two bytecodes, e.g. in a
    slot just before it starts a run, which must not start after the window closed. Python runs
    handlers only when it runs code, so a timer gives it some while Qt's event loop waits."""
    from PySide6.QtCore import QTimer

    def close() -> None:
        window.close()  # the last window closed ends the event loop; a running step may delay that
        if not window.isVisible():
            app.exit(exit_code[0])

    def on_signal(signum: int, frame) -> None:
        code = EXIT_INTERRUPTED if signum == signal.SIGINT else EXIT_TERMINATED
        if exit_code[0] in (EXIT_INTERRUPTED, EXIT_TERMINATED):  # the second one: no more waiting
            from gpu_train_monitor.gui.launch.live_launchers import kill_all

            kill_all()  # a data-parallel run's processes must not outlive the window (os._exit skips atexit)
            sys.stderr.flush()
            os._exit(code)
        exit_code[0] = code
        print(f"\n{PROG}: {'interrupted' if code == EXIT_INTERRUPTED else 'terminated'}: closing", file=sys.stderr)
        QTimer.singleShot(0, close)

    if not in_main_thread():
        return
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, on_signal)
    ticker = QTimer(app)
    ticker.timeout.connect(lambda: None)
    ticker.start(200)
    for signum in pending:
        on_signal(signum, None)


def restore_default_signals() -> None:
    """The window is gone: signals act as they do before a window opens."""
    if in_main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
