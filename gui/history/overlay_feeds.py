"""Where the overlays' data come from: each overlaid run read from the store in the background the first
time (`gpu_train_monitor.gui.history.loader`), then, while it is still recording, polled for what it recorded since, so
the overlay of a live run grows. `gpu_train_monitor.gui.history.overlays` draws what this reads.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.gui.history.feed import FeedUpdate, RunFeed, SeriesArrays, StoreLink
from gpu_train_monitor.gui.history.loader import LoadedRun, RunLoader
from gpu_train_monitor.gui.history.overlays import Overlays
from gpu_train_monitor.store.run_store import RunRow, StoreError


class OverlayFeeds(QObject):
    """Reads the runs laid on `overlays` from the store of `link`."""

    dropped = Signal(int, str)  # a run taken off because it is gone or unreadable, and why ("" when deleted)

    def __init__(self, link: StoreLink, overlays: Overlays, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.link, self.overlays = link, overlays
        self.feeds: dict[int, RunFeed] = {}  # the overlaid runs still recording
        self.loaders: dict[int, RunLoader] = {}  # overlaid runs whose first read is under way

    def add(self, row: RunRow) -> None:
        """Overlay `row`'s run: its curves at once, its data once read."""
        if row.id in self.overlays.ids():
            return
        self.overlays.add(row)
        feed = self.feeds[row.id] = RunFeed(row.id)
        loader = self.loaders[row.id] = RunLoader(self.link.path, feed, self)
        loader.loaded.connect(lambda loaded, run_id=row.id: self._on_loaded(run_id, loaded))
        loader.failed.connect(lambda message, run_id=row.id: self._on_failed(run_id, message))
        loader.ended.connect(lambda run_id=row.id, loader=loader: self._on_loader_ended(run_id, loader))
        loader.start()

    def remove(self, run_id: int) -> None:
        self.overlays.remove(run_id)
        self.feeds.pop(run_id, None)
        loader = self.loaders.pop(run_id, None)
        if loader is not None and loader.shutdown():  # its first read interrupted
            loader.deleteLater()

    def poll(self) -> None:
        """What the overlaid runs still recording recorded since the last poll; StoreError when unreadable."""
        store = self.link.store()
        if store is None:
            return
        for run_id, feed in list(self.feeds.items()):
            if run_id in self.loaders:  # its first read is under way
                continue
            try:
                update = feed.poll(store)
            except UserError as exc:  # RunNotFound: deleted elsewhere (the CLI's `runs delete`)
                if isinstance(exc, StoreError):
                    raise
                self._drop(run_id, "")
                continue
            self._extend(run_id, update)

    def _on_loaded(self, run_id: int, loaded: LoadedRun | None) -> None:
        if run_id not in self.loaders:  # taken off while it was read
            return
        if loaded is None:  # deleted meanwhile
            self._drop(run_id, "")
            return
        self._extend(run_id, loaded.update, loaded.arrays)

    def _on_failed(self, run_id: int, message: str) -> None:
        if run_id in self.loaders:
            self._drop(run_id, message)

    def _on_loader_ended(self, run_id: int, loader: RunLoader) -> None:
        if self.loaders.get(run_id) is loader:
            del self.loaders[run_id]
        loader.deleteLater()

    def _extend(self, run_id: int, update: FeedUpdate, arrays: SeriesArrays | None = None) -> None:
        """Add what a read found; a run that has ended needs no more reads."""
        if update.restarted:
            self.overlays.reset(run_id)
        self.overlays.extend(run_id, arrays if arrays is not None else SeriesArrays.of(update))
        if update.finished:
            self.feeds.pop(run_id, None)

    def _drop(self, run_id: int, why: str) -> None:
        self.remove(run_id)
        self.dropped.emit(run_id, why)

    def stop(self) -> None:
        """Interrupt the reads under way and wait for their threads."""
        for loader in list(self.loaders.values()):
            loader.shutdown()
        self.loaders.clear()
        self.overlays.stop()
