"""The steps a watched loop made before it went quiet (an evaluation, an upload, a sleep before a kill) reported
from a thread of ours: the loop reports its buffered steps only at its next step, which may come late or never, and
a process killed meanwhile (SIGKILL, the machine's out-of-memory killer) would take them along.

Once the loop has made no step for IDLE_FLUSH_S, the steps it buffered are reported (the report's one transfer,
off the training thread, waiting for its copy). A busy loop reports them itself first, so this thread reports
nothing while it trains.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

IDLE_FLUSH_S = 1.0  # no step for this long: the buffered steps are reported
CHECK_S = 0.25


class IdleFlush:
    """Calls `flush()` once `idle_since()` (a perf_counter time, or None when nothing waits) is IDLE_FLUSH_S old."""

    def __init__(self, flush: Callable[[], None], idle_since: Callable[[], float | None]) -> None:
        self.flush, self.idle_since = flush, idle_since
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> IdleFlush:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="gpu-train-monitor-idle-flush", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()

    def _run(self) -> None:
        while not self._stopped.wait(CHECK_S):
            since = self.idle_since()
            if since is not None and time.perf_counter() - since >= IDLE_FLUSH_S:
                self.flush()
