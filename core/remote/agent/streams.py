"""The agent's streams, each in a thread of its own: a device's readings about once a second, and a followed run's
rows (what was recorded after the client's cursor, then what is new every POLL_S, then the end).

A followed run's first chunk carries its whole run row; later ones its uid and only the columns that changed
(what a mirror updates), so a live run costs its new rows and a few numbers per poll."""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Any

from ...base.text import Message
from ...events.status import Status
from ...store.run_store import RunNotFound, RunStore
from ..wire import compact_rows
from . import store_rows
from .spawn import launch_of

if TYPE_CHECKING:
    from .server import Stream

POLL_S = 0.2  # how often a followed run's store is read for new rows
HEARTBEAT_EVERY_S = 10.0  # a run row whose only change is its heartbeat is sent this often (the mirror's liveness)
DEAD_POLLS = 5  # polls a run may stay `running` after its process is gone before the stream ends it interrupted
PROGRESS_EVERY_S = 1.0  # a run row whose only changes are progress columns is sent this often
PROGRESS_COLUMNS = frozenset(
    {"steps", "samples_per_s", "loss_last", "val_accuracy", "peak_allocated_bytes", "peak_reserved_bytes"}
)


def readings_stream(stream: Stream, spec: str, interval_s: float) -> None:
    """The device's memory as this host's probe reads it, and NVML's view of the whole GPU where it has one."""
    from ...device import nvml
    from ...memory.probe import MemoryProbe  # torch: loaded by the probe, in this thread

    try:
        probe = MemoryProbe(spec)
    except (RuntimeError, ValueError, AssertionError) as exc:
        stream.end("error", str(Message("cannot read device {spec}: {why}", spec=spec, why=str(exc))))
        return
    index = (probe.device.index or 0) if probe.device.type == "cuda" else None
    while True:
        sample = probe.sample()
        status = nvml.status(index) if index is not None else None
        data: dict[str, Any] = {
            "at": time.time(),
            "device": spec,
            "sample": dataclasses.asdict(sample),
            "nvml": None if status is None else dataclasses.asdict(status),
        }
        if not stream.data(data) or stream.wait(interval_s):
            break
    if stream.stop.is_set():
        stream.end("cancelled")


def follow_stream(stream: Stream, uid: str, after_step: int, after_seq: int, rows: str = "objects") -> None:
    """Send run `uid`'s rows after the cursor, then what is recorded while it runs, then `end` with its final
    status. A run started by an agent but not recorded yet is waited for while its process lives. `rows`:
    "objects" or "columns" (gpu_train_monitor.remote.wire.compact_rows: the fewest bytes)."""
    with RunStore(stream.agent.store_path) as store:
        run_id = _wait_for_run(stream, store, uid)
        if run_id is None:
            return
        delta = RunDelta()
        encoder = compact_rows.Encoder() if rows == compact_rows.MODE else None
        dead_polls = 0
        while True:
            try:
                found = store_rows.snapshot(store, run_id, after_step, after_seq)
            except RunNotFound as exc:
                stream.end("not_found", str(exc))
                return
            changed = delta.changes(found.run, time.monotonic())
            if found.has_rows or changed:
                for index, chunk in enumerate(store_rows.chunks(found)):
                    chunk["run"] = (changed if index == 0 else {}) or {"uid": uid}
                    if encoder is not None:
                        chunk = encoder.encode(chunk)
                    if not stream.data(chunk):
                        break
                delta.sent(changed, time.monotonic())
                after_step, after_seq = found.last_step(after_step), found.last_seq(after_seq)
            if found.run["status"] != Status.RUNNING:
                if not stream.stopped:
                    stream.end(found.run["status"])
                return
            if not found.live:  # its process is gone: the store says so now, and a next read ends the stream
                store.mark_interrupted()
                dead_polls += 1
                if dead_polls > DEAD_POLLS:  # a store this agent may not write keeps saying `running`
                    stream.end(Status.INTERRUPTED)
                    return
            if stream.wait(POLL_S):
                break
    if stream.stop.is_set():
        stream.end("cancelled")


def _wait_for_run(stream: Stream, store: RunStore, uid: str) -> int | None:
    """The run's id once recorded; None (the stream ended) when its process ended first or the stream stopped."""
    launch = None
    while True:
        run_id = store.find_uid(uid)
        if run_id is not None:
            return run_id
        launch = launch or launch_of(stream.agent.store_path, uid)
        if launch is None or not launch.alive():
            run_id = store.find_uid(uid)  # recorded just before it ended
            if run_id is not None:
                return run_id
            why = launch.last_error() if launch is not None else ""
            stream.end(Status.FAILED, why or str(Message("its process ended before it recorded anything")))
            return None
        if stream.wait(POLL_S):
            if stream.stop.is_set():
                stream.end("cancelled")
            return None


class RunDelta:
    """What a chunk carries of the run row: all of it first, then its uid and the columns that changed since
    (the config and the start's JSON travel once). Progress columns (steps, throughput, loss, peaks) go at most
    every PROGRESS_EVERY_S unless something else changed too (its status: at once); a change of the heartbeat
    alone every HEARTBEAT_EVERY_S (the mirror's sign of life)."""

    def __init__(self) -> None:
        self._sent: dict[str, Any] | None = None
        self._progress_at = self._heartbeat_at = -1e9

    def changes(self, now: dict[str, Any], clock: float) -> dict[str, Any]:
        """The columns to send now ({} when nothing is worth sending)."""
        if self._sent is None:
            return dict(now)
        changed = {key: value for key, value in now.items() if self._sent.get(key) != value}
        if not set(changed) - PROGRESS_COLUMNS - {"heartbeat_at"}:  # nothing but progress and the heartbeat
            if clock - self._progress_at < PROGRESS_EVERY_S:
                changed = {key: value for key, value in changed.items() if key == "heartbeat_at"}
            if set(changed) == {"heartbeat_at"} and clock - self._heartbeat_at < HEARTBEAT_EVERY_S:
                changed = {}
        return {"uid": now["uid"], **changed} if changed else {}

    def sent(self, changed: dict[str, Any], clock: float) -> None:
        self._sent = {**(self._sent or {}), **changed}
        if set(changed) & PROGRESS_COLUMNS or len(changed) > 2:
            self._progress_at = clock
        if "heartbeat_at" in changed:
            self._heartbeat_at = clock
