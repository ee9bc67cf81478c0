"""`run --nproc N`: start N rank processes on this machine with torch.distributed's elastic launcher (the
API behind `torchrun`), wait for them, and say how they ended.

The launcher is torch's own (`elastic_launch`): it starts the workers, gives each its RANK / WORLD_SIZE /
LOCAL_RANK and a rendezvous, watches them, and when one fails stops the others (SIGTERM, then SIGKILL after
SHUTDOWN_TIMEOUT_S), so no process is left behind. Each rank runs this same command line (`rank_main`);
rank 0 prints the progress and the summary and records the run. Each rank leaves a line saying how it
ended in a folder the launcher reads afterwards, so a failure is reported with the rank that caused it
(an out-of-memory error, an exception, a signal that killed it), not with the connection errors the
others saw once it was gone; the run's record says the same.
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
from pathlib import Path
from typing import Any

from core.base.text import Message, message_from_json, message_to_json
from core.config.run_config import RunConfig
from core.distributed.env import ENV_RANK_DIR, ENV_RUN_UID
from core.distributed.rank_watch import (
    RankWatch,
    make_rank_folder,
    quiet_launcher_logs,
    torch_log_folder,
)
from core.run.outcome import status_word
from core.run.status import EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USER_ERROR, Status

SHUTDOWN_TIMEOUT_S = 15  # after one rank failed or a stop: the others' time to end before SIGKILL
PR_SET_PDEATHSIG = 1  # linux/prctl.h
ENV_STOP_WITH_PID = "GPU_TRAIN_MONITOR_STOP_WITH_PID"  # the window that started this launcher
START_TIMEOUT_S = 120  # the rendezvous: every rank must have started within this
RESULT_WAIT_S = 1.0  # a rank that has returned waits this long for the launcher to take its result, then exits


def rank_main(argv: list[str]) -> int:
    """A worker: the same command line, run as one rank (core.cli.main sees RANK/WORLD_SIZE and trains its part)."""
    from core.cli.main import main

    die_with_launcher()
    ignore_control_signals()
    _thread_lock_for_progress_bars()
    code = main(argv)
    if code not in (0, EXIT_INTERRUPTED, EXIT_TERMINATED):
        # exit, not return: torch's launcher holds a returning worker until every worker has returned, and
        # counts only an exit as a failure, which is what makes it stop the others at once. At once: its
        # process group's teardown can wait for peers that are gone; everything it had to say is written
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    exit_after_result()
    return code


def _thread_lock_for_progress_bars() -> None:
    """tqdm's default lock is a multiprocessing semaphore, registered with the launcher's resource tracker: a
    rank that exits at once (or is killed) leaves it registered, and the tracker prints a 'leaked semaphore'
    warning. A rank's bar is drawn by one process: a thread lock does."""
    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())


def exit_after_result() -> None:
    """torch's launcher holds a returned worker until it has collected every result, which it never does once
    it is itself stopping (a SIGTERM or Ctrl+C to it): the worker would sit stopped until SIGKILL. Its result is
    in the launcher's queue as it returns, so a moment later it exits, 0: the end it returned stands."""
    timer = threading.Timer(RESULT_WAIT_S, os._exit, args=(0,))
    timer.daemon = True
    timer.start()


def ignore_control_signals() -> None:
    """SIGUSR1 / SIGUSR2 (clear the cache, pause) are the window's controls for a run; before the run's own
    handlers are in place, and after, they must not do their default: end the process."""
    for signum in (signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, signal.SIG_IGN)


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
        Path(folder, f"rank-{rank}.json").write_text(json.dumps({
            "rank": rank, "status": status, "message": str(message), "said": message_to_json(message),
            "user_error": user_error, "at": time.time()}))
    except OSError:
        pass  # the launcher then reports what the process's exit said


@contextlib.contextmanager
def rank_folder(nproc: int) -> Iterator[tuple[str, str]]:
    """(the run's uid, the folder where ranks say how they ended), both handed to the ranks in their
    environment (the workers inherit it); the folder is removed and the environment restored afterwards.
    Each worker also gets its share of the CPU cores as torch threads (unless OMP_NUM_THREADS is set), as one
    process would use them all: N processes with torch's default would each fight over every core."""
    uid = uuid.uuid4().hex
    folder = make_rank_folder()
    changes = {ENV_RUN_UID: uid, ENV_RANK_DIR: folder,
               "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // nproc)))}
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
    return LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=nproc, run_id=uid, rdzv_backend="c10d",
                        rdzv_endpoint="localhost:0", max_restarts=0, rdzv_configs={"join_timeout": START_TIMEOUT_S},
                        monitor_interval=0.1, start_method="spawn", shutdown_timeout=SHUTDOWN_TIMEOUT_S,
                        logs_specs=DefaultLogsSpecs(log_dir=torch_log_folder(folder)))


def launch(argv: list[str], config: RunConfig,
           on_failure: Callable[[str, str], None] | None = None) -> tuple[int, str]:
    """Run `argv` (the CLI's arguments) as `config.nproc` ranks; returns (exit code, the one line that says how
    the run ended unless it completed, or ""): "failed: <the rank that caused it>", "stopped: <why>".
    `on_failure(run uid, the rank that caused it)` hears a failure first (the CLI marks the run's record)."""
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import elastic_launch

    from core.device.devices import check_process_count  # torch: this module is read by the window before it loads

    check_process_count(config)
    ignore_control_signals()  # a stray kill -USR1 of the launcher must not end the run
    stop_with_window()
    with rank_folder(config.nproc) as (uid, folder), RankWatch(uid, SHUTDOWN_TIMEOUT_S):
        try:
            results = elastic_launch(launch_config(config.nproc, uid, folder), rank_main)(argv)
            code = int(results.get(0, 1) or 0)
        except ChildFailedError as exc:
            ends = read_rank_ends(folder)
            if any(end.get("user_error") for end in ends.values()):  # bad input: rank 0 has said it in one line
                return EXIT_USER_ERROR, ""
            failure = describe_failure(exc.failures, ends, config.nproc)
            if on_failure is not None:
                on_failure(uid, failure)
            return 1, f"failed: {failure}"
        except SignalException as exc:  # Ctrl+C, or a signal to the launcher: it passed it on to the ranks,
            code = 128 + int(exc.sigval)  # which stopped at a step
        rank0 = read_rank_ends(folder).get(0)  # rank 0 leaves its end line to the launcher: said once, here
        if rank0 is None or rank0["status"] == "completed" or not rank0["message"]:
            return code, ""
        return code, f"{rank0['status']}: {rank0['message']}"


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
    """The first cause, by rank: a rank that reported its own failure (out of memory, diverged, an error that
    is not a lost connection), else a rank killed by a signal the launcher did not send, else the first exit."""
    own = sorted(((rank, end) for rank, end in ends.items()
                  if not Status(end["status"]).ended_well and not lost_peer(end["message"])),
                 key=lambda item: item[1].get("at", 0.0))  # the first to fail, not the lowest rank
    if own:
        rank, end = own[0]
        return Message("rank {rank} ended the run ({status}): {message}", rank=rank, status=status_word(end["status"]),
                       message=end["message"])
    silent = [rank for rank in range(world) if rank not in ends]  # ranks that never said how they ended
    timed_out = any("timed out" in end["message"].lower() or "timeout" in end["message"].lower()
                    for end in ends.values()) or any(  # NCCL's watchdog aborts a rank whose collective timed out
        f.exitcode == -signal.SIGABRT for f in failures.values())
    silent = [rank for rank in silent if not (rank in failures and failures[rank].exitcode == -signal.SIGABRT)]
    if silent and timed_out:
        return Message("rank {rank} stopped responding: the other ranks timed out waiting for it in a collective "
                       "(--dist-timeout), and it was ended", rank=silent[0])
    killed = [(rank, f) for rank, f in sorted(failures.items())
              if f.exitcode < 0 and -f.exitcode not in (signal.SIGTERM, signal.SIGINT) and rank not in ends]
    if killed:
        rank, failure = killed[0]
        return Message("rank {rank} (pid {pid}) {how}", rank=rank, pid=failure.pid, how=_how_it_ended(failure.exitcode))
    rank = min(failures, key=lambda r: failures[r].timestamp)
    failure = failures[rank]
    message = ends.get(rank, {}).get("message", "")
    if message:
        return Message("rank {rank} (pid {pid}) {how}: {message}", rank=rank, pid=failure.pid,
                       how=_how_it_ended(failure.exitcode), message=message)
    return Message("rank {rank} (pid {pid}) {how}", rank=rank, pid=failure.pid, how=_how_it_ended(failure.exitcode))


def _how_it_ended(exitcode: int) -> str:
    """'was killed by SIGKILL' or 'exited with code 1'."""
    if exitcode < 0:
        return Message("was killed by {signal}", signal=signal.Signals(-exitcode).name)
    return Message("exited with code {code}", code=exitcode)


def lost_peer(message: str) -> bool:
    """Whether a rank's failure is only the echo of another rank's: its peer went away mid-collective."""
    text = message.lower()
    return any(part in text for part in ("connection closed", "connection reset", "broken pipe", "timed out",
                                         "timeout", "nccl communicator was aborted", "connection refused", "peer",
                                         "remote process exited", "distbackenderror", "pair closure"))

