"""The agent's jobs: a comparison or a batch-size search started on this machine (`gpu_train_monitor.remote.agent.job`),
detached like a run, and its journal streamed to the other side from a line cursor.

Shapes (gpu_train_monitor.remote.agent.ops lists every op):
- compare {"config": RunConfig dict, "overrides": [dict, ...] (2 to 4 runs), "uid"?} -> {"uid", "pid"}
- find {"config", "capacity"?: int, "margin"?, "start"?, "max_batch"?, "predict"?: true, "uid"?} -> {"uid", "pid"}
- journal {"uid", "after": lines held already, "encoding"?: "deflate"} -> stream of {"lines": [journal objects],
  "next": lines sent so far} (deflate: {"z": base64 of the lines' JSON, one deflate stream flushed per data}),
  then end "finished" (the job's end line was sent) or "died" with the log's last error (its process is gone and
  left no end line).
Both start ops check their input here first (the bounds table, the comparison's plan, the search's options), so
bad input is one `user_error` reply and nothing starts.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...base.errors import ConfigError, UserError
from ...base.text import Message
from ...config.bounds import FINDER_BOUNDS
from ...config.run_config import RunConfig
from ...events.signals import Control, signal_number
from ..wire.protocol import BAD_REQUEST, CHUNK_BYTES, ProtocolError
from .args import argument, new_uid
from .job import COMPARE, FIND, SPEC_SUFFIX, journal_path
from .server import StartStream
from .spawn import check_uid, launch_of, log_folder

if TYPE_CHECKING:
    from .server import Agent, Stream

DEFLATE = "deflate"
POLL_S = 0.2  # how often a followed journal is read for new lines
QUIET_POLLS = 3  # polls with no new line after the job's process is gone before its stream ends "died"


def compare(agent: Agent, request_id: int, request: dict[str, Any]) -> dict[str, Any]:
    from ...compare.plan import checked_overrides, plan

    base = RunConfig.from_dict(argument(request, "config", dict))
    given = argument(request, "overrides", list)
    if not all(isinstance(item, dict) for item in given):
        raise ProtocolError(BAD_REQUEST, Message("argument overrides must be a list of objects"))
    overrides = [checked_overrides(item) for item in given]  # ConfigError (field "vs"), as `compare --vs` says it
    contenders = plan(base, overrides)  # a count outside 2..4, two runs that are the same
    folder = agent.policy.run_folder(contender.config for contender in contenders)
    return _start(agent, request, {"kind": COMPARE, "config": base.to_dict(), "overrides": overrides}, folder)


def find(agent: Agent, request_id: int, request: dict[str, Any]) -> dict[str, Any]:
    from ...finder.search import check_one_process, check_search_options

    config = RunConfig.from_dict(argument(request, "config", dict))
    check_one_process(config)
    capacity = argument(request, "capacity", int, None)
    if capacity is not None and capacity <= 0:
        raise ConfigError("capacity", Message("must be a positive number of bytes, got {value}", value=capacity))
    margin = float(argument(request, "margin", (int, float), FINDER_BOUNDS["margin"].default))
    start = argument(request, "start", int, FINDER_BOUNDS["start"].default)
    max_batch = argument(request, "max_batch", int, FINDER_BOUNDS["max_batch"].default)
    check_search_options(margin, start, max_batch)
    predict = argument(request, "predict", bool, True)
    folder = agent.policy.run_folder([config])
    spec = {
        "kind": FIND,
        "config": config.to_dict(),
        "capacity": capacity,
        "margin": margin,
        "start": start,
        "max_batch": max_batch,
        "predict": predict,
    }
    return _start(agent, request, spec, folder)


def _start(agent: Agent, request: dict[str, Any], spec: dict[str, Any], cwd: Path | None) -> dict[str, Any]:
    """Write the job's spec and start `python -P -m gpu_train_monitor.remote.agent.job SPEC` detached, as a run
    is started."""
    uid = new_uid(agent, request)
    folder = log_folder(agent.store_path)
    path = folder / f"{uid}{SPEC_SUFFIX}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8") as file:
            json.dump({**spec, "store": str(agent.store_path)}, file)
    except FileExistsError:
        raise UserError(Message("a job with uid {uid} was started already", uid=uid)) from None
    except OSError as exc:
        raise UserError(Message("cannot start the job: {why}", why=exc.strerror or str(exc))) from None
    package = __name__.split(".")[0]  # gpu_train_monitor
    launch = agent.spawner.start(uid, [sys.executable, "-P", "-m", f"{package}.remote.agent.job", str(path)], cwd)
    return {"uid": uid, "pid": launch.pid, "started_at": launch.started_at}


def journal(agent: Agent, request_id: int, request: dict[str, Any]) -> StartStream:
    from ...store.run_store import RunNotFound

    uid = argument(request, "uid", str)
    after = argument(request, "after", int, 0)
    if after < 0:
        raise ProtocolError(BAD_REQUEST, Message("argument after must be 0 or more"))
    encoding = argument(request, "encoding", str, "")
    if encoding not in ("", DEFLATE):
        raise ProtocolError(BAD_REQUEST, Message("argument encoding must be deflate or left out"))
    if not _is_job(agent.store_path, uid):
        raise RunNotFound(Message("no job with uid {uid} on {host}", uid=uid, host=agent.host))
    return StartStream(lambda stream: journal_stream(stream, uid, after, encoding == DEFLATE))


def _is_job(store_path: Path, uid: str) -> bool:
    try:
        check_uid(uid)
    except UserError:
        return False
    return (log_folder(store_path) / f"{uid}{SPEC_SUFFIX}").is_file()


def journal_stream(stream: Stream, uid: str, after: int, deflate: bool = False) -> None:
    """Send the journal's complete lines after line `after`, then the new ones as they are written, then end.
    `deflate`: each data's lines as `{"z": base64 of one deflate stream, flushed per data}` instead of `"lines"`;
    the stream shares its dictionary across datas, so a report (750 B of JSON, much like the one before) costs
    about a seventh of that."""
    send = _deflated(stream) if deflate else (lambda batch, number: stream.data({"lines": batch, "next": number}))
    store_path = stream.agent.store_path
    path = journal_path(log_folder(store_path) / f"{uid}{SPEC_SUFFIX}")
    launch = launch_of(store_path, uid)
    offset, number, partial, quiet = 0, 0, b"", 0
    while True:
        try:
            with open(path, "rb") as file:
                file.seek(offset)
                new = file.read()
        except FileNotFoundError:
            new = b""  # the job has not opened it yet
        offset += len(new)
        lines = (partial + new).split(b"\n")
        partial = lines.pop()  # what follows the last newline: a line still being written
        batch: list[Any] = []
        size, ended = 0, False
        for raw in lines:
            number += 1
            if number <= after:
                continue
            item = json.loads(raw)
            ended = ended or "end" in item
            batch.append(item)
            size += len(raw)
            if size >= CHUNK_BYTES:
                if not send(batch, number):
                    break
                batch, size = [], 0
        if batch and not send(batch, number):
            break
        if ended:
            stream.end("finished")
            return
        if lines:
            quiet = 0
        elif launch is None or not launch.alive():
            quiet += 1
            if quiet > QUIET_POLLS:
                why = launch.last_error() if launch is not None else ""
                stream.end("died", why or str(Message("the job's process ended without a last word")))
                return
        if stream.wait(POLL_S):
            break
    if stream.stop.is_set():
        stream.end("cancelled")


def _deflated(stream: Stream) -> Callable[[list[Any], int], bool]:
    compressor = zlib.compressobj(6)

    def send(batch: list[Any], number: int) -> bool:
        text = json.dumps(batch, separators=(",", ":")).encode("utf-8")
        packed = compressor.compress(text) + compressor.flush(zlib.Z_SYNC_FLUSH)
        return stream.data({"z": base64.b64encode(packed).decode("ascii"), "next": number})

    return send


def control_job(agent: Agent, uid: str, control: Control) -> bool:
    """Send `control` to job `uid`'s process; False when `uid` is no job (a run, then); UserError when the job
    has ended or this machine has no signal for it."""
    if not _is_job(agent.store_path, uid):
        return False
    launch = launch_of(agent.store_path, uid)
    if launch is None or not launch.identified():  # ended, or its pid is now another process's
        raise UserError(Message("the job {uid} on {host} has ended", uid=uid, host=agent.host))
    number = signal_number(control)
    if number is None:
        raise UserError(Message("{host} has no signal for {control}", host=agent.host, control=control.value))
    try:
        os.kill(launch.pid, number)
    except ProcessLookupError:
        raise UserError(Message("the job {uid} on {host} has ended", uid=uid, host=agent.host)) from None
    return True
