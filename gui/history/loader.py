"""A recorded run's history read in a thread of its own, so opening or overlaying a long run never freezes
the window: a run of a million steps and 100k reports takes seconds for SQLite to hand over (measured 3 to
6 s on a 2-core machine), what follows it as it records takes milliseconds a poll.

The thread opens a connection of its own (SQLite connections belong to one thread) and closes it when
done; `shutdown` interrupts a query under way (`sqlite3.Connection.interrupt`, thread-safe), so a window
closed mid-read waits a moment at most.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Signal, Slot

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.gui.history.feed import FeedUpdate, RunFeed, SeriesArrays, StoreLink
from gpu_train_monitor.gui.qt.background import BackgroundTask
from gpu_train_monitor.gui.qt.core_text import error_text
from gpu_train_monitor.store.run_store import RunNotFound, StoreError

SHUTDOWN_WAIT_MS = 30_000  # an interrupted query returns at once; this bounds a disk that hangs


@dataclass(frozen=True)
class LoadedRun:
    """Everything recorded about a run up to now, and what the feed returned (it continues from there)."""

    update: FeedUpdate
    arrays: SeriesArrays  # the update's series, converted in the loader's thread
    started: Mapping[str, Any]  # the RunStarted event's fields
    config: Mapping[str, Any]
    summary: Mapping[str, Any] | None  # None while running


class RunLoader(QObject):
    """Reads run `feed.run_id` from the store at `path` once, in the background; `loaded` or `failed` follows."""

    loaded = Signal(object)  # LoadedRun, or None when the run is not in the store (deleted meanwhile)
    failed = Signal(str)  # why it could not be read (a sentence from the store, in the user's language)
    ended = Signal()  # the thread is gone, whichever way it went

    def __init__(self, path: Path, feed: RunFeed, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path, self.feed = path, feed
        self._task = BackgroundTask(self, thread_name="run-loader")
        self._task.done.connect(self._on_done)
        self._task.failed.connect(self._on_failed)
        self._task.ended.connect(self.ended)
        self._connection: Any = None  # the worker's sqlite3 connection while it reads

    @property
    def running(self) -> bool:
        return self._task.running

    def start(self) -> None:
        self._task.start(self._read)

    def _read(self, _report: Callable[[object], None], cancelled: Callable[[], bool]) -> LoadedRun | UserError | None:
        """In the worker thread: the feed's poll (all of the run, the first time) and the run's documents. A
        store problem comes back as the error itself: its message keeps its structure
        (`gpu_train_monitor.base.text.Message`) to be translated in the GUI thread, not flattened to a string."""
        link = StoreLink(self.path)
        try:
            store = link.store()
            if store is None:
                raise StoreError(
                    QCoreApplication.translate("RunLoader", "the run store {path} is not there any more").format(
                        path=self.path
                    )
                )
            self._connection = store.connection
            if cancelled():
                raise StoreError(QCoreApplication.translate("RunLoader", "reading the run was cancelled"))
            run_id = self.feed.run_id
            try:
                update = self.feed.poll(store)
                return LoadedRun(
                    update, SeriesArrays.of(update), store.started(run_id), store.config(run_id), store.summary(run_id)
                )
            except RunNotFound:
                return None
        except UserError as exc:
            return exc
        finally:
            self._connection = None
            link.close()

    @Slot(object)
    def _on_done(self, result: LoadedRun | UserError | None) -> None:
        if isinstance(result, UserError):
            self.failed.emit(error_text(result))
        else:
            self.loaded.emit(result)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.failed.emit(message.splitlines()[0] if message else self.tr("the run could not be read"))

    def shutdown(self, timeout_ms: int = SHUTDOWN_WAIT_MS) -> bool:
        """Stop reading (a query under way is interrupted) and wait for the thread; True when it is gone."""
        connection = self._connection
        if connection is not None:
            with contextlib.suppress(sqlite3.Error):  # closed by the worker a moment ago: nothing to interrupt
                connection.interrupt()
        return self._task.shutdown(timeout_ms)
