"""The thread-safe commands that steer a running session from other threads (the window, a Ctrl+C
handler): flags and a queue that the training loop reads at step boundaries, never mid-step; and the one
fan-out of a run's events to its observers."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable
from typing import Any


class RunControls:
    """Stop, pause, resume, clear the cache, save a snapshot or a checkpoint: safe to call from any thread.
    `observers` hear what the run does through `emit` (append to it before the run starts)."""

    def __init__(self, observers: Iterable[Callable[[Any], None]] = ()) -> None:
        self.observers: list[Callable[[Any], None]] = list(observers)
        self._stop = threading.Event()
        self._running = threading.Event()
        self._running.set()
        self._clear = threading.Event()
        self._snapshot_requests: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._checkpoint_requests: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._asked = False  # set after any request: the loop reads one attribute a step, not five queues and flags

    def emit(self, event: Any) -> None:
        """Tell every observer, in order, on the caller's thread. An observer that raises is not caught here:
        the raise goes to whoever emitted (inside the training loop the run then ends `failed`), and the
        observers after it miss that event."""
        for observer in self.observers:
            observer(event)

    def request_stop(self) -> None:
        self._stop.set()
        self._running.set()  # wake a paused loop so it can stop
        self._asked = True  # after the request itself: the loop that sees the flag finds it

    def pause(self) -> None:
        self._running.clear()
        self._asked = True  # after the request itself: the loop that sees the flag finds it

    def resume(self) -> None:
        self._running.set()

    def request_cache_clear(self) -> None:
        self._clear.set()
        self._asked = True  # after the request itself: the loop that sees the flag finds it

    def request_snapshot(self, path: str) -> None:
        """Save a memory snapshot to `path` at the next step boundary (needs record_memory_history)."""
        self._snapshot_requests.put(path)
        self._asked = True  # after the request itself: the loop that sees the flag finds it

    def request_checkpoint(self, path: str | None = None) -> None:
        """Save a checkpoint at the next step boundary (also while paused): to `path`, or None for the run's
        checkpoint folder (`checkpoints/<run_uid>/step-<N>.pt`)."""
        self._checkpoint_requests.put(path)
        self._asked = True  # after the request itself: the loop that sees the flag finds it

    # ---- read by the loop ------------------------------------------------------------------------
    def take_asked(self) -> bool:
        """Whether anything was requested since the last call (then read the requests): the flag is cleared before
        they are read, so a request made meanwhile is seen at the next call."""
        if not self._asked:  # only a True is ever cleared: a request flagged after this read waits for the next call
            return False
        self._asked = False
        return True

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()

    @property
    def pause_requested(self) -> bool:
        return not self._running.is_set() and not self._stop.is_set()

    def wait_for_resume(self, timeout_s: float) -> bool:
        """True once resumed (or stopped); False after `timeout_s` still paused."""
        return self._running.wait(timeout_s)

    def take_cache_clear(self) -> bool:
        """Whether a clear was requested since the last call (and forget the request)."""
        if not self._clear.is_set():
            return False
        self._clear.clear()
        return True

    def take_snapshot_paths(self) -> list[str]:
        paths = []
        while not self._snapshot_requests.empty():
            paths.append(self._snapshot_requests.get())
        return paths

    def take_checkpoint_requests(self) -> list[str | None]:
        requests = []
        while not self._checkpoint_requests.empty():
            requests.append(self._checkpoint_requests.get())
        return requests
