"""Reading recorded runs in the GUI thread: one connection to the run store shared by the history, the
opened runs and the overlays, and a feed per run that returns only what was recorded since its last poll.

The store is another process's as much as the window's (a run started in a terminal records there while
the window reads), so nothing here assumes it is there, readable or still holding a run: `StoreLink`
turns every problem into a `StoreError` with a sentence for people, and the callers show it.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QCoreApplication

from gpu_train_monitor.base.text import Message, message_from_json
from gpu_train_monitor.events import events as core_events
from gpu_train_monitor.events.events import MemorySample
from gpu_train_monitor.events.module_bytes import modules_from_json
from gpu_train_monitor.gui.plots import rank_series
from gpu_train_monitor.gui.plots.rank_series import SERIES_COLUMNS, RankLayout
from gpu_train_monitor.store.connection import store_problem
from gpu_train_monitor.store.run_store import (
    FINISHED,
    EventRow,
    RankReportRow,
    ReportRow,
    RunRow,
    RunStore,
    StepSeries,
    StoreError,
)

has_allocator = rank_series.has_allocator  # whether a device has allocator counters (the overlays ask here)


class StoreLink:
    """The GUI thread's connection to the run store at `path`, opened when first needed.

    Opened for writing, so that a run whose process died can be marked interrupted and runs can be renamed,
    annotated and deleted; a store this user may only read is opened read-only, and those edits then say
    why they cannot be made. A store file that does not exist is not created by looking at it: `store()`
    returns None until a run records there."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser()
        self._store: RunStore | None = None
        self._identity: tuple[int, int] | None = None  # the file the connection has open (device, inode)

    def store(self) -> RunStore | None:
        """The open store, None while no file exists at `path`; StoreError when it cannot be used."""
        identity = _file_identity(self.path)
        if self._store is not None and identity == self._identity:
            return self._store
        self.close()  # never opened, or the file was deleted or replaced: its old connection reads a ghost
        if identity is None:
            return None
        self._identity = identity
        try:
            self._store = RunStore(self.path)
        except StoreError as writable_problem:
            try:
                self._store = RunStore(self.path, readonly=True)
            except StoreError:
                raise writable_problem from None
        return self._store

    @property
    def writable(self) -> bool:
        return self._store is not None and not self._store.readonly

    def writable_store(self) -> RunStore:
        """The store, for an edit; StoreError saying why when it cannot be edited."""
        store = self.store()
        if store is None:
            raise StoreError(
                QCoreApplication.translate("StoreLink", "no run store at {path} yet").format(path=self.path)
            )
        if store.readonly:
            raise StoreError(
                QCoreApplication.translate(
                    "StoreLink", "the run store {path} is read-only for this user: runs cannot be changed here"
                ).format(path=self.path)
            )
        return store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


@dataclass(frozen=True)
class FeedUpdate:
    """What one poll of a run found: its row as it is now, and what was recorded since the previous poll."""

    row: RunRow
    steps: StepSeries
    reports: tuple[ReportRow, ...]
    events: tuple[EventRow, ...]
    restarted: bool  # the run was resumed from a checkpoint since: this update holds all of it again
    rank_reports: tuple[RankReportRow, ...] = ()  # a data-parallel run's per-rank samples, of these reports' steps

    @property
    def finished(self) -> bool:
        return self.row.status in FINISHED


def mark_interrupted(store: RunStore) -> int:
    """`RunStore.mark_interrupted` (runs whose process is gone become interrupted), its failure a StoreError
    like a read's: it writes, and a store its writer holds for seconds is locked."""
    try:
        return store.mark_interrupted()
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(store_problem(store.path, exc)) from None


class RunFeed:
    """Follows one run in the store: each `poll` returns the steps, reports and events after those returned
    before. A run whose recording process is gone is marked interrupted (the store does it for every such
    run) as soon as a poll notices, so a killed terminal run stops being live within a poll. A data-parallel
    run's rank reports come with the reports of their steps (a report recorded between the two reads waits
    for the next poll with its rank reports: they are drawn at their report's time)."""

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id
        self.last_step = 0
        self.last_report_step = 0
        self.last_seq = 0
        self.last_rank_step = 0
        self._resumes: int | None = None

    def poll(self, store: RunStore) -> FeedUpdate:
        """RunNotFound when the run was deleted, StoreError when the store cannot be read."""
        row = store.run(self.run_id)
        if row.status == "running" and not row.live and not store.readonly and mark_interrupted(store):
            row = store.run(self.run_id)
        restarted = self._resumes is not None and row.resumes != self._resumes
        # a resume replaced what followed its checkpoint: take the run again from the start
        last_step, last_report, last_seq, last_rank = (
            (0, 0, 0, 0) if restarted else (self.last_step, self.last_report_step, self.last_seq, self.last_rank_step)
        )
        steps = store.steps(self.run_id, after_step=last_step)
        reports = store.reports(self.run_id, after_step=last_report)
        events = store.events(self.run_id, after_seq=last_seq)
        report_step = reports[-1].step if reports else last_report
        ranks = (
            [rank for rank in store.rank_reports(self.run_id, after_step=last_rank) if rank.step <= report_step]
            if row.world_size > 1
            else []
        )
        # only now, every read done: a poll that fails half-way leaves the feed where it was
        self._resumes = row.resumes
        self.last_step = steps.steps[-1] if steps.steps else last_step
        self.last_report_step = report_step
        self.last_seq = events[-1].seq if events else last_seq
        self.last_rank_step = ranks[-1].step if ranks else last_rank
        return FeedUpdate(row, steps, tuple(reports), tuple(events), restarted, tuple(ranks))


@dataclass(frozen=True)
class SeriesArrays:
    """A feed update's series as numpy arrays, for the plots' ring buffers. Made in the loader's thread for
    a run's first read: for a million steps the conversion alone took a third of a second."""

    steps: np.ndarray  # step numbers, ascending
    losses: np.ndarray  # NaN where the loss was not finite
    memory: np.ndarray  # per report: `MemoryPlot` rows (see `memory_rows`)
    rates: np.ndarray  # per report: step, images/s
    rank_devices: tuple[str, ...] = ()  # a data-parallel run's ranks in `rank_memory` (their devices, by rank)
    rank_memory: np.ndarray = dataclasses.field(default_factory=lambda: np.empty((0, 1)))  # `RankLayout` rows

    @classmethod
    def of(cls, update: FeedUpdate) -> SeriesArrays:
        reports = update.reports
        layout = RankLayout.of_rows(update.rank_reports)
        return cls(
            np.asarray(update.steps.steps, dtype=np.int64),
            np.asarray(update.steps.losses, dtype=np.float64),
            memory_rows(reports, update.row.started_at),
            np.array([(r.step, r.samples_per_s) for r in reports], dtype=np.float64).reshape(-1, 2),
            layout.devices,
            layout.rows_of_reports(update.rank_reports, {r.step: r.at - update.row.started_at for r in reports}),
        )


def memory_rows(reports: Sequence[ReportRow], started_at: float) -> np.ndarray:
    """Reports' memory as `MemoryPlot` rows: seconds since the run's start, then its lines' columns
    (`SERIES_COLUMNS`: allocated, reserved, peak, device used (NaN where unknown), capacity)."""
    return np.array([_plot_row(r.at - started_at, r) for r in reports], dtype=np.float64).reshape(
        -1, 1 + len(SERIES_COLUMNS)
    )


def sample_row(sample: MemorySample) -> tuple[float, ...]:
    """A reading timed in seconds since the run's start (a cache clear's) as a `MemoryPlot` row."""
    return _plot_row(sample.time_s, sample)


def with_samples(rows: np.ndarray, samples: list[MemorySample]) -> np.ndarray:
    """`MemoryPlot` rows with `samples` (cache clears' readings) put among them in time order."""
    if not samples:
        return rows
    merged = np.concatenate([rows, np.array([sample_row(sample) for sample in samples], dtype=np.float64)])
    return merged[np.argsort(merged[:, 0], kind="stable")]


def _plot_row(seconds: float, reading: ReportRow | MemorySample) -> tuple[float, ...]:
    values = (getattr(reading, name) for name in SERIES_COLUMNS.values())
    return (seconds, *(np.nan if value is None else value for value in values))


def rebuild_event(kind: str, data: Mapping[str, Any], time_s: float = 0.0) -> Any:
    """The core event a stored one was (a `MemorySample` inside timed at `time_s`), so
    `gpu_train_monitor.events.event_text` words it as the live log did; None for a kind or fields this version does not
    know."""
    cls = getattr(core_events, kind, None)
    if cls is None or not dataclasses.is_dataclass(cls) or not isinstance(cls, type):
        return None
    names = {f.name for f in dataclasses.fields(cls)}
    values = {key: value for key, value in data.items() if key in names}
    # a text recorded with its template comes back translatable (gpu_train_monitor.store.run_writes.event_data)
    for name in names:
        rebuilt = message_from_json(data.get(f"{name}_message"))
        if isinstance(rebuilt, Message) and rebuilt == data.get(name):  # renders the English it was stored with
            values[name] = rebuilt
    if isinstance(values.get("memory"), Mapping):
        memory = dict(values["memory"], time_s=time_s)
        try:
            values["memory"] = MemorySample(**{f.name: memory.get(f.name) for f in dataclasses.fields(MemorySample)})
        except TypeError:
            return None
    if "phase_peaks" in values:
        values["phase_peaks"] = tuple((str(phase), int(size)) for phase, size in values["phase_peaks"] or ())
    if "modules" in values:  # a step by module: rows as plain objects in the store
        values["modules"] = modules_from_json(values["modules"])
    try:
        return cls(**values)
    except TypeError:
        return None


def contiguous_runs(steps: np.ndarray) -> list[slice]:
    """Slices of `steps` (ascending) that are consecutive numbers: each one a `LossPlot.add_losses` call."""
    if len(steps) == 0:
        return []
    edges = [0, *(np.flatnonzero(np.diff(steps) != 1) + 1).tolist(), len(steps)]
    return [slice(a, b) for a, b in zip(edges, edges[1:])]
