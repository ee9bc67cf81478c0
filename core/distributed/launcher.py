"""Start N rank processes on this machine with torch.distributed's elastic launcher (the API behind
`torchrun`), wait for them, and say how they ended: `run_ranks(entry, args, nproc)`, the one launcher behind
`run --nproc N` (whose entry runs the same command line as a rank) and a comparison's data-parallel contender
(gpu_train_monitor.distributed.relay). The caller passes the rank's entry point, so this module never imports its
callers.

The launcher is torch's own (`elastic_launch`): it starts the workers, gives each its RANK / WORLD_SIZE /
LOCAL_RANK and a rendezvous, watches them, and when one fails stops the others (SIGTERM, then SIGKILL after
SHUTDOWN_TIMEOUT_S), so no process is left behind. Each rank leaves a line saying how it ended in a folder
the launcher reads afterwards, so a failure is reported with the rank that caused it (an out-of-memory
error, an exception, a signal that killed it), not with the connection errors the others saw once it was
gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base.text import Message, message_from_json, message_to_json
from ..events.outcome import status_word
from ..events.signals import ignore_control_signals
from ..events.status import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USER_ERROR, Status
from .env import ENV_RANK_DIR, ENV_RUN_UID, ENV_STOP_WITH_PID
from .rank_watch import RankWatch, make_rank_folder, quiet_launcher_logs, torch_log_folder

SHUTDOWN_TIMEOUT_S = 15  # after one rank failed or a stop: the others' time to end before SIGKILL
PR_SET_PDEATHSIG = 1  # linux/prctl.h
START_TIMEOUT_S = 120  # the rendezvous: every rank must have started within this
RESULT_WAIT_S = 1.0  # a rank that has returned waits this long for the launcher to take its result, then exits


def _rank_process(entry: Callable[..., int], *args: Any) -> int:
    """A worker: `entry(*args)` as one rank (it reads RANK / WORLD_SIZE from its environment); its exit code."""
    die_with_launcher()
    ignore_control_signals()  # until the run's own handlers are in place, and after
    code = entry(*args)
    if code not in (0, EXIT_INTERRUPTED, EXIT_TERMINATED):
        # exit, not return: torch's launcher holds a returning worker until every worker has returned, and
        # counts only an exit as a failure, which is what makes it stop the others at once. At once: its
        # process group's teardown can wait for peers that are gone; everything it had to say is written
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    exit_after_result()
    return code


def exit_after_result() -> None:
    """torch's launcher holds a returned worker until it has collected every result, which it never does once
    it is itself stopping (a SIGTERM or Ctrl+C to it): the worker would sit stopped until SIGKILL. Its result is
    in the launcher's queue as it returns, so a moment later it exits, 0: the end it returned stands."""
    timer = threading.Timer(RESULT_WAIT_S, os._exit, args=(0,))
    timer.daemon = True
    timer.start()


def die_with_launcher() -> None:
    """Linux: this worker gets SIGKILL when its launcher dies, even by SIGKILL (which the launcher cannot
    pass on): no rank outlives it, training alone for nobody."""
    if _on_parent_death(signal.SIGKILL) and os.getppid() == 1:  # the launcher died before the request was made
        os._exit(1)


def stop_with_window() -> None:
    """A launcher the window started (it names itself in ENV_STOP_WITH_PID) gets SIGTERM when the window dies,
    even by SIGKILL: it then stops its ranks as it does for any SIGTERM."""
    parent = os.environ.pop(ENV_STOP_WITH_PID, "")
    if parent.isdigit() and _on_parent_death(signal.SIGTERM) and os.getppid() != int(parent):
        os.kill(os.getpid(), signal.SIGTERM)  # the window is already gone


def _on_parent_death(signum: int) -> bool:
    """Ask Linux to send `signum` to this process when its parent (the thread that started it) ends."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signum)) == 0
    except (OSError, AttributeError):
        return False


def record_rank_end(rank: int, status: str, message: str, user_error: bool = False) -> None:
    """Called by each rank as it ends: the launcher reads it to name the rank that failed first."""
    folder = os.environ.get(ENV_RANK_DIR)
    if not folder:
        return
    try:
        Path(folder, f"rank-{rank}.json").write_text(
            json.dumps(
                {
                    "rank": rank,
                    "status": status,
                    "message": str(message),
                    "said": message_to_json(message),
                    "user_error": user_error,
                    "at": time.time(),
                }
            )
        )
    except OSError:
        pass  # the launcher then reports what the process's exit said


@contextlib.contextmanager
def rank_folder(nproc: int, uid: str | None = None) -> Iterator[tuple[str, str]]:
    """(the run's uid, the folder where ranks say how they ended), both handed to the ranks in their
    environment (the workers inherit it); the folder is removed and the environment restored afterwards.
    `uid`: the caller's name for the run (the window's, to find it in the store), else a new one.
    Each worker also gets its share of the CPU cores as torch threads (unless OMP_NUM_THREADS is set), as one
    process would use them all: N processes with torch's default would each fight over every core."""
    uid = uid or uuid.uuid4().hex
    folder = make_rank_folder()
    changes = {
        ENV_RUN_UID: uid,
        ENV_RANK_DIR: folder,
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // nproc))),
    }
    before = {name: os.environ.get(name) for name in changes}
    os.environ.update(changes)
    try:
        yield uid, folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def launch_config(nproc: int, uid: str, folder: str) -> Any:
    """torch's LaunchConfig for `nproc` workers on this machine: no restarts (a failed run is reported, not
    retried), a rendezvous on a free local port, the others stopped SHUTDOWN_TIMEOUT_S after one failed, its
    files in `folder` (the launch's `rank_folder`, removed after it).
    """
    from torch.distributed.elastic.multiprocessing import DefaultLogsSpecs
    from torch.distributed.launcher.api import LaunchConfig

    quiet_launcher_logs()  # the failure is said once, in one line that names the rank
    return LaunchConfig(
        min_nodes=1,
        max_nodes=1,
        nproc_per_node=nproc,
        run_id=uid,
        rdzv_backend="c10d",
        rdzv_endpoint="localhost:0",
        max_restarts=0,
        rdzv_configs={"join_timeout": START_TIMEOUT_S},
        monitor_interval=0.1,
        start_method="spawn",
        shutdown_timeout=SHUTDOWN_TIMEOUT_S,
        logs_specs=DefaultLogsSpecs(log_dir=torch_log_folder(folder)),
    )


@dataclass(frozen=True)
class RanksEnded:
    """How a launch of ranks ended, for its caller to report and record."""

    uid: str  # the run's name, the same on every rank
    code: int  # rank 0's exit code; EXIT_FAILED (EXIT_USER_ERROR) when a rank failed (on bad input); 128 + the
    # signal that stopped the launcher
    failure: str = ""  # when a rank failed: which one caused it, in one line (a Message)
    user_error: bool = False  # a rank met bad input (rank 0 has said it in one line)
    rank0: dict[str, Any] | None = None  # what rank 0 said about how it ended, when no rank failed

    @property
    def end_line(self) -> str:
        """The one line that says how the run ended unless it completed, or "": "failed: <the rank that caused
        it>", "stopped: <why>" (rank 0 leaves its end line to the launcher: said once, here)."""
        if self.user_error:  # rank 0 has said it
            return ""
        if self.failure:
            return f"failed: {self.failure}"
        rank0 = self.rank0
        if rank0 is None or rank0["status"] == Status.COMPLETED or not rank0["message"]:
            return ""
        return f"{rank0['status']}: {rank0['message']}"


def run_ranks(entry: Callable[..., int], args: tuple[Any, ...], nproc: int, uid: str | None = None) -> RanksEnded:
    """Run `entry(*args)` in `nproc` rank processes of this machine and wait for them. `entry` is a module-level
    function (it is pickled by name: the workers are spawned) that returns the rank's exit code. `uid` names
    the run (ENV_RUN_UID in the ranks' environment), else a new one does. A launcher that fails to start
    (the rendezvous, a spawn) raises."""
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import elastic_launch

    with rank_folder(nproc, uid) as (uid, folder), RankWatch(uid, SHUTDOWN_TIMEOUT_S):
        try:
            results = elastic_launch(launch_config(nproc, uid, folder), _rank_process)(entry, *args)
            code = int(results.get(0, 1) or 0)
        except ChildFailedError as exc:
            ends = read_rank_ends(folder)
            user_error = any(end.get("user_error") for end in ends.values())
            return RanksEnded(
                uid,
                EXIT_USER_ERROR if user_error else EXIT_FAILED,
                describe_failure(exc.failures, ends, nproc),
                user_error,
            )
        except SignalException as exc:  # Ctrl+C, or a signal to the launcher: it passed it on to the ranks,
            code = 128 + int(exc.sigval)  # which stopped at a step
        return RanksEnded(uid, code, rank0=read_rank_ends(folder).get(0))


def read_rank_ends(folder: str) -> dict[int, dict[str, Any]]:
    """What each rank said about how it ended, by rank; its "message" a Message again when it was one."""
    ends: dict[int, dict[str, Any]] = {}
    for path in Path(folder).glob("rank-*.json"):
        try:
            data = json.loads(path.read_text())
            ends[int(data["rank"])] = data
        except (OSError, ValueError, KeyError):
            continue
        said = message_from_json(data.pop("said", None))
        if isinstance(said, str) and said == data.get("message"):
            data["message"] = said
    return ends


def describe_failure(failures: dict[int, Any], ends: dict[int, dict[str, Any]], world: int) -> str:
    """The first cause, by rank: a rank killed by a signal that neither the launcher nor a timeout sent (SIGKILL,
    SIGSEGV: it could say nothing, and what the others said is the echo of its going, whatever words their
    backend found for it), else a rank that reported its own failure (out of memory, diverged, an error that is
    not a lost connection), else a rank that stopped responding, else a rank that vanished while the others only
    lost their connection to it (torch's launcher reports the first failure it sees, which may be such an echo),
    else the first exit."""
    hard = [
        (rank, f)
        for rank, f in sorted(failures.items())
        if rank not in ends and f.exitcode < 0 and -f.exitcode not in (signal.SIGTERM, signal.SIGINT, signal.SIGABRT)
    ]
    if hard:
        rank, failure = hard[0]
        return Message("rank {rank} (pid {pid}) {how}", rank=rank, pid=failure.pid, how=_how_it_ended(failure.exitcode))
    own = sorted(
        (
            (rank, end)
            for rank, end in ends.items()
            if not Status(end["status"]).ended_well and not lost_peer(end["message"])
        ),
        key=lambda item: item[1].get("at", 0.0),
    )  # the first to fail, not the lowest rank
    if own:
        rank, end = own[0]
        return Message(
            "rank {rank} ended the run ({status}): {message}",
            rank=rank,
            status=status_word(end["status"]),
            message=end["message"],
        )
    silent = [rank for rank in range(world) if rank not in ends]  # ranks that never said how they ended
    timed_out = any(
        "timed out" in end["message"].lower() or "timeout" in end["message"].lower() for end in ends.values()
    ) or any(  # NCCL's watchdog aborts a rank whose collective timed out
        f.exitcode == -signal.SIGABRT for f in failures.values()
    )
    silent = [rank for rank in silent if not (rank in failures and failures[rank].exitcode == -signal.SIGABRT)]
    if silent and timed_out:
        return Message(
            "rank {rank} stopped responding: the other ranks timed out waiting for it in a collective "
            "(--dist-timeout), and it was ended",
            rank=silent[0],
        )
    killed = [
        (rank, f)
        for rank, f in sorted(failures.items())
        if f.exitcode < 0 and -f.exitcode not in (signal.SIGTERM, signal.SIGINT) and rank not in ends
    ]
    if killed:
        rank, failure = killed[0]
        return Message("rank {rank} (pid {pid}) {how}", rank=rank, pid=failure.pid, how=_how_it_ended(failure.exitcode))
    echoes = [end for end in ends.values() if not Status(end["status"]).ended_well]
    vanished = [rank for rank in silent if rank not in failures]  # torch reports only the first failure it saw
    if vanished and echoes and all(lost_peer(end["message"]) for end in echoes):
        return Message(
            "rank {rank} ended without a word (killed, or its process crashed), and the others lost their "
            "connection to it",
            rank=vanished[0],
        )
    rank = min(failures, key=lambda r: failures[r].timestamp)
    failure = failures[rank]
    message = ends.get(rank, {}).get("message", "")
    if message:
        return Message(
            "rank {rank} (pid {pid}) {how}: {message}",
            rank=rank,
            pid=failure.pid,
            how=_how_it_ended(failure.exitcode),
            message=message,
        )
    return Message("rank {rank} (pid {pid}) {how}", rank=rank, pid=failure.pid, how=_how_it_ended(failure.exitcode))


def _how_it_ended(exitcode: int) -> str:
    """'was killed by SIGKILL' or 'exited with code 1'."""
    if exitcode < 0:
        return Message("was killed by {signal}", signal=signal.Signals(-exitcode).name)
    return Message("exited with code {code}", code=exitcode)


def lost_peer(message: str) -> bool:
    """Whether a rank's failure is only the echo of another rank's: its peer went away mid-collective."""
    text = message.lower()
    return any(
        part in text
        for part in (
            "connection closed",
            "connection reset",
            "broken pipe",
            "timed out",
            "timeout",
            "nccl communicator was aborted",
            "connection refused",
            "peer",
            "remote process exited",
            "distbackenderror",
            "pair closure",
        )
    )
