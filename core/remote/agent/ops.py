"""The agent's ops, one function each: `OPS[op](agent, request_id, request)` returns the reply's result, or a
`StartStream` for the stream ops. Nothing else exists: no shell, no file access beyond the store, no command
strings (a run's command is built from a validated RunConfig; a watched script's argv is a list).

Shapes (gpu_train_monitor.remote.wire.protocol has the line format):
- ping {} -> {"at": unix time}
- devices {} -> {"devices": [{"spec", "kind", "name", "capacity_bytes", "free_bytes", "used_bytes"}]}
- readings {"device": spec, "interval_s": 1.0} -> stream of {"at", "device", "sample", "nvml"}
- runs {"search": "", "offset": 0} -> {"runs": [every column of `runs`, id included, and "live"; newest first]}
  and "more": true when they did not all fit in RUNS_PAGE_BYTES (ask again from offset + len(runs))
- run {"run_id": int} or {"uid": str} ("id" is the request's own), optional "after_step", "after_seq", "rows"
  -> a chunk (run row without id, steps, reports, rank_reports, events) and "complete": false when more rows
  remain (ask again from the last step and seq received)
- follow {"uid", "after_step": 0, "after_seq": 0, "rows": "objects" | "columns"} -> stream of chunks:
  backfill, then live, then end (reason: the run's final status; "failed" with a "message" when its process ended before
  recording it). The first chunk has the whole run row, later ones its uid and the columns that changed.
- start {"config": RunConfig dict, "uid"?, "name"?} -> {"uid", "pid"}
- watch {"argv": [script, args...], "cwd"?, "name"?, "uid"?} -> {"uid", "pid"}
- control {"uid", "control": "stop" | "pause" | "clear_cache"} -> {} (a run's uid, or a job's:
  gpu_train_monitor.remote.agent.job_ops)
- compare, find and journal: a comparison or a batch-size search started here, and its journal
  (gpu_train_monitor.remote.agent.job_ops has their shapes)
- cancel {"stream": id} -> {} (the stream then ends with reason "cancelled")
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from typing import Any

import psutil

from ...base.errors import UserError
from ...base.text import Message
from ...config.command_line import command_line
from ...config.run_config import RunConfig
from ...events.signals import Control, signal_number
from ...store.run_store import RunNotFound, RunStore
from ...watch.command_line import watch_command_line
from ..wire import compact_rows
from ..wire.protocol import BAD_REQUEST, CHUNK_BYTES, MAX_REPLY_BYTES, ProtocolError
from . import store_rows
from .args import argument, new_uid
from .job_ops import compare as compare_op
from .job_ops import control_job, find, journal
from .server import Agent, Op, StartStream
from .spawn import Launch, check_uid, launch_of
from .streams import follow_stream, readings_stream

RUNS_PAGE_BYTES = MAX_REPLY_BYTES // 2  # a `runs` reply carries at most this much (runs hold their config's JSON)
MAX_ARGV = 256  # a watched script's arguments: a list, bounded like the request line
NAME_WAIT_S = 600.0  # how long a run's name waits for the run to be recorded


def hello(agent: Agent, request_id: int, request: dict[str, Any]) -> dict[str, Any]:
    raise ProtocolError(BAD_REQUEST, Message("hello was said already"))


def ping(agent: Agent, request_id: int, request: dict[str, Any]) -> dict[str, Any]:
    return {"at": time.time()}


def devices(agent: Agent, request_id: int, request: dict[str, Any]) -> dict[str, Any]:
    from ...device.devices import list_devices  # loads torch: only now

    found = list_devices()
    return {
        "devices": [
            {
                "spec": device.spec,
                "kind": device.kind,
                "name": str(device.name),
                "capacity_bytes": device.capacity_bytes,
                "free_bytes": device.free_bytes,
                "used_bytes": device.used_bytes,
            }
            for device in found
        ]
    }


def readings(agent: Agent, request_id: int, request: dict[str, Any]) -> StartStream:
    spec = argument(request, "device", str)
    interval = float(argument(request, "interval_s", (int, float), 1.0))
    if not 0.1 <= interval <= 60.0:
        raise ProtocolError(BAD_REQUEST, Message("argument interval_s must be from 0.1 to 60 seconds"))
    return StartStream(lambda stream: readings_stream(stream, spec, interval))


def runs(agent: Agent, request_id: int, request: dict[str, Any]) -> dict[str, Any]:
    offset = argument(request, "offset", int, 0)
    if offset < 0:
        raise ProtocolError(BAD_REQUEST, Message("argument offset must be 0 or more"))
    listed = store_rows.run_list(agent.store, argument(request, "search", str, ""))
    page = store_rows.fitting(listed[offset:], RUNS_PAGE_BYTES)
    more = offset + len(page) < len(listed)
    return {"runs": page, "more": True} if more else {"runs": page}


def run(agent: Agent, request_id: int, request: dict[str, Any]) -> dict[str, Any]:
    if "uid" in request:
        run_id = store_rows.find_run(agent.store, uid=argument(request, "uid", str))
    else:
        run_id = store_rows.find_run(agent.store, run_id=argument(request, "run_id", int))
    after_step = argument(request, "after_step", int, 0)
    after_seq = argument(request, "after_seq", int, 0)
    rows = _rows(request)
    chunks = store_rows.chunks(store_rows.snapshot(agent.store, run_id, after_step, after_seq), 2 * CHUNK_BYTES)
    chunk = {**chunks[0], "complete": len(chunks) == 1}
    return compact_rows.Encoder().encode(chunk) if rows == compact_rows.MODE else chunk


def follow(agent: Agent, request_id: int, request: dict[str, Any]) -> StartStream:
    uid = argument(request, "uid", str)
    after_step = argument(request, "after_step", int, 0)
    after_seq = argument(request, "after_seq", int, 0)
    rows = _rows(request)
    if agent.store.find_uid(uid) is None:
        launch = launch_of(agent.store_path, uid) if _valid_uid(uid) else None
        if launch is None:
            raise RunNotFound(Message("no run with uid {uid} on {host}", uid=uid, host=agent.host))
    return StartStream(lambda stream: follow_stream(stream, uid, after_step, after_seq, rows))


def start(agent: Agent, request_id: int, request: dict[str, Any]) -> dict[str, Any]:
    values = argument(request, "config", dict)
    config = RunConfig.from_dict(values)  # the bounds table: a bad value is a ConfigError naming its field
    folder = agent.policy.run_folder([config])  # its own model or dataset: from an allowed folder only, run there
    uid = new_uid(agent, request)
    name = argument(request, "name", str, "").strip()
    python, *rest = command_line(config, agent.store_path)
    # -P: a `gpu_train_monitor` folder where it starts is not ours
    launch = agent.spawner.start(uid, [python, "-P", *rest], folder)
    if name:
        _name_when_recorded(agent, launch, name)
    return {"uid": uid, "pid": launch.pid}


def watch(agent: Agent, request_id: int, request: dict[str, Any]) -> dict[str, Any]:
    argv = argument(request, "argv", list)
    if not argv or len(argv) > MAX_ARGV or not all(isinstance(item, str) for item in argv):
        raise ProtocolError(BAD_REQUEST, Message("argument argv must be a list of 1 to {most} strings", most=MAX_ARGV))
    cwd = agent.policy.watch_folder(argument(request, "cwd", str, ""), argv)  # a script under an allowed folder
    uid = new_uid(agent, request)
    name = argument(request, "name", str, "").strip()
    launch = agent.spawner.start(uid, watch_command_line(agent.store_path, [sys.executable, *argv], name), cwd)
    return {"uid": uid, "pid": launch.pid}


def control(agent: Agent, request_id: int, request: dict[str, Any]) -> dict[str, Any]:
    uid = argument(request, "uid", str)
    word = argument(request, "control", str)
    try:
        chosen = Control(word)
    except ValueError:
        raise ProtocolError(BAD_REQUEST, Message("no such control: {word}", word=repr(word))) from None
    run_id = agent.store.find_uid(uid)
    if run_id is None and control_job(agent, uid, chosen):  # a comparison or a search the agent started
        return {}
    if run_id is None:
        raise RunNotFound(Message("no run with uid {uid} on {host}", uid=uid, host=agent.host))
    row = agent.store.run(run_id)
    if row.host != socket.gethostname():
        raise UserError(
            Message("run {run_id} trains on {host}, not on {here}", run_id=row.id, host=row.host, here=agent.host)
        )
    if row.status != "running" or not row.live:
        status = row.status if row.status != "running" else "interrupted"
        raise UserError(Message("run {run_id} is not running (it is {status})", run_id=row.id, status=status))
    number = signal_number(chosen)
    if number is None:
        raise UserError(Message("{host} has no signal for {control}", host=agent.host, control=chosen.value))
    process = _process_started_here(agent, uid, row.pid)
    if process is None:
        raise UserError(
            Message(
                "run {run_id} was not started by the agent of this run store on {host}: only a run started through "
                "it (from a window or --remote) is steered from another machine; steer this one where it was "
                "started",
                run_id=row.id,
                host=agent.host,
            )
        )
    try:
        process.send_signal(number)  # psutil checks that the pid is still this process
    except psutil.NoSuchProcess:
        raise UserError(Message("run {run_id} has just ended", run_id=row.id)) from None
    except psutil.AccessDenied:
        raise UserError(Message("run {run_id} belongs to another user", run_id=row.id)) from None
    return {}


def _process_started_here(agent: Agent, uid: str, pid: int) -> psutil.Process | None:
    """The process of run `uid` (recorded as `pid`) when this store's agent started it and can still identify it
    (its launch record, start time and the uid in its environment); None for any other pid a row may name (a
    crafted row, one mirrored from a machine of the same name, a run started by hand)."""
    launch = launch_of(agent.store_path, uid) if _valid_uid(uid) else None
    return None if launch is None else launch.process_of(pid)


def cancel(agent: Agent, request_id: int, request: dict[str, Any]) -> dict[str, Any]:
    agent.cancel(argument(request, "stream", int))
    return {}


def _rows(request: dict[str, Any]) -> str:
    """How the client asked for rows: "columns" (compact_rows: what the client asks for) or "objects" (the default:
    rows as dicts of their columns, kept for people and tests reading the agent's lines by hand)."""
    rows = argument(request, "rows", str, "objects")
    if rows not in ("objects", compact_rows.MODE):
        raise ProtocolError(BAD_REQUEST, Message("argument rows must be columns or objects"))
    return rows


def _valid_uid(uid: str) -> bool:
    try:
        check_uid(uid)
    except UserError:
        return False
    return True


def _name_when_recorded(agent: Agent, launch: Launch, name: str) -> None:
    """Give the run its name once it is recorded (`run` has no --name): a thread waits for it while the agent
    serves and the process lives."""

    def wait_and_name() -> None:
        try:
            with RunStore(agent.store_path) as store:
                deadline = time.monotonic() + NAME_WAIT_S
                while not agent.closing.wait(0.2) and time.monotonic() < deadline:
                    run_id = store.find_uid(launch.uid)
                    if run_id is not None:
                        store.rename(run_id, name)
                        return
                    if not launch.alive():
                        return
        except UserError:
            return  # the store cannot be written: the run keeps its default title

    threading.Thread(target=wait_and_name, name=f"agent-name-{launch.uid}", daemon=True).start()


OPS: dict[str, Op] = {  # what the agent is handed (Agent(..., ops=OPS))
    "hello": hello,
    "ping": ping,
    "devices": devices,
    "readings": readings,
    "runs": runs,
    "run": run,
    "follow": follow,
    "start": start,
    "watch": watch,
    "control": control,
    "cancel": cancel,
    "compare": compare_op,
    "find": find,
    "journal": journal,
}
