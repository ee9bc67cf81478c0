"""A data-parallel run started from inside this process (a comparison's contender): torch's elastic launcher
runs the ranks, and rank 0 sends its events back through a queue, so the caller's observers see the run
as they see a `TrainingSession`'s. The launcher and the ranks' body are the CLI's (`run_ranks`, `train_rank`).
The controls reach rank 0 as the signals a CLI run answers to (gpu_train_monitor.events.signals' table: stop, clear the
cache, pause / resume); rank 0 shares them with every rank at its next report."""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
from collections.abc import Iterable
from typing import Any

from ..base.text import Message, message_of
from ..config.run_config import RunConfig
from ..events.controls import RunControls
from ..events.events import Observer, RunFinished
from ..events.signals import Control, signal_number
from ..events.status import Status
from ..events.summary import RunSummary


def relay_rank(config_values: dict[str, Any], events: Any, timeout_s: float) -> int:
    """A rank's entry point: train one rank; rank 0 puts its pid (once the controls can reach it), then each
    event, on `events` (a manager queue)."""
    from .rank_process import train_rank  # torch: in the ranks only

    return train_rank(
        RunConfig.from_dict(config_values),
        timeout_s,
        [events.put],
        controls_ready=lambda: events.put(("pid", os.getpid())),
    )


class DataParallelRun(RunControls):
    """Runs `config` (nproc > 1) as ranks of this machine and relays rank 0's events to `observers`."""

    def __init__(self, config: RunConfig, observers: Iterable[Observer] = (), timeout_s: float = 120.0) -> None:
        super().__init__(observers)
        self.config = config
        self.timeout_s = timeout_s
        self._rank0: int | None = None
        self._lock = threading.Lock()

    def run(self) -> RunFinished:
        """Train to the end; the final event, also when the ranks failed before rank 0 could say so."""
        from ..device.devices import check_process_count

        check_process_count(self.config)
        with multiprocessing.get_context("spawn").Manager() as manager:
            events = manager.Queue()
            outcome: dict[str, Any] = {}
            launcher = threading.Thread(target=self._launch, args=(events, outcome), daemon=True)
            launcher.start()
            finished = self._relay(events, launcher)
            launcher.join()
        if finished is None:
            finished = self._failed(outcome.get("failure", Message("the ranks ended without a result")))
        elif outcome.get("failure") and Status(finished.status).ended_well:
            finished = self._failed(outcome["failure"])
        elif outcome.get("failure"):  # rank 0 said how it saw the end; the launcher knows who caused it
            finished = RunFinished(finished.status, finished.step, outcome["failure"], False, finished.summary)
        self.emit(finished)
        return finished

    def _launch(self, events: Any, outcome: dict[str, Any]) -> None:
        from .launcher import run_ranks

        try:
            ended = run_ranks(relay_rank, (self.config.to_dict(), events, self.timeout_s), self.config.nproc)
        except Exception as exc:  # noqa: BLE001 - the launcher itself failed (rendezvous, spawn): say so
            outcome["failure"] = Message(
                "the ranks could not be started: {kind}: {error}", kind=type(exc).__name__, error=message_of(exc)
            )
            return
        if ended.failure:
            outcome["failure"] = ended.failure

    def _relay(self, events: Any, launcher: threading.Thread) -> RunFinished | None:
        """Pass events on until rank 0's RunFinished (kept back: `run` may name a failing rank in it)."""
        while True:
            try:
                item = events.get(timeout=0.2)
            except queue.Empty:
                if not launcher.is_alive():
                    return None
                continue
            if isinstance(item, tuple) and item[0] == "pid":
                with self._lock:
                    self._rank0 = int(item[1])
                self._forward_pending()
                continue
            if isinstance(item, RunFinished):
                return item
            self.emit(item)

    def _failed(self, message: str) -> RunFinished:
        config = self.config.to_dict()
        summary = RunSummary(
            Status.FAILED,
            0,
            0,
            0.0,
            None,
            None,
            None,
            None,
            str(config["device"]),
            "",
            0,
            0,
            0,
            config,
            world_size=self.config.nproc,
        )
        return RunFinished(Status.FAILED, 0, message, False, summary)

    # ---- commands reach rank 0 as signals --------------------------------------------------------
    def request_stop(self) -> None:
        if not self.stop_requested:  # once: the rank stops at its next report either way
            super().request_stop()
            self._signal(Control.STOP)

    def pause(self) -> None:
        if not self.pause_requested:
            super().pause()
            self._signal(Control.PAUSE)

    def resume(self) -> None:
        if self.pause_requested:
            super().resume()
            self._signal(Control.PAUSE)

    def request_cache_clear(self) -> None:
        self._signal(Control.CLEAR_CACHE)

    def _forward_pending(self) -> None:
        """Requests made before rank 0 was known."""
        if self.stop_requested:
            self._signal(Control.STOP)
        elif self.pause_requested:
            self._signal(Control.PAUSE)

    def _signal(self, control: Control) -> None:
        with self._lock:
            pid = self._rank0
        signum = signal_number(control)
        if pid is not None and signum is not None:
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass  # it has just ended
