"""The agent's streams, each in a thread of its own: a device's readings about once a second, and a followed run's
rows (what was recorded after the client's cursor, then what is new every POLL_S, then the end)."""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Any

from ..base.text import Message
from ..run.status import Status
from ..store.run_store import RunNotFound, RunStore
from . import store_rows
from .spawn import launch_of

if TYPE_CHECKING:
    from .agent import Stream

POLL_S = 0.2  # how often a followed run's store is read for new rows
HEARTBEAT_EVERY_S = 10.0  # a run row whose only change is its heartbeat is sent this often (the mirror's liveness)


def readings_stream(stream: Stream, spec: str, interval_s: float) -> None:
    """The device's memory as this host's probe reads it, and NVML's view of the whole GPU where it has one."""
    from ..device import nvml
    from ..memory.probe import MemoryProbe  # torch: loaded by the probe, in this thread

    try:
        probe = MemoryProbe(spec)
    except (RuntimeError, ValueError, AssertionError) as exc:
        stream.end("error", str(Message("cannot read device {spec}: {why}", spec=spec, why=str(exc))))
        return
    index = probe.device.index or 0 if probe.device.type == "cuda" else None
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


def follow_stream(stream: Stream, uid: str, after_step: int, after_seq: int) -> None:
    """Send run `uid`'s rows after the cursor, then what is recorded while it runs, then `end` with its final
    status. A run started by an agent but not recorded yet is waited for while its process lives."""
    with RunStore(stream.agent.store_path) as store:
        run_id = _wait_for_run(stream, store, uid)
        if run_id is None:
            return
        sent_run: dict[str, Any] | None = None
        while True:
            try:
                found = store_rows.snapshot(store, run_id, after_step, after_seq)
            except RunNotFound as exc:
                stream.end("not_found", str(exc))
                return
            if found.has_rows or _run_changed(sent_run, found.run):
                for chunk in store_rows.chunks(found):
                    if not stream.data(chunk):
                        break
                sent_run = found.run
                after_step, after_seq = found.last_step(after_step), found.last_seq(after_seq)
            if found.run["status"] != Status.RUNNING:
                if not stream.stopped:
                    stream.end(found.run["status"])
                return
            if not found.live:  # its process is gone: the store says so now, and the next read ends the stream
                store.mark_interrupted()
                continue
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


def _run_changed(sent: dict[str, Any] | None, now: dict[str, Any]) -> bool:
    """Whether the run row is worth sending: new, changed beyond its heartbeat, or its heartbeat due."""
    if sent is None:
        return True
    if any(sent[key] != now[key] for key in now if key != "heartbeat_at"):
        return True
    return now["heartbeat_at"] - sent["heartbeat_at"] >= HEARTBEAT_EVERY_S
