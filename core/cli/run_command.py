"""`gpu-train-monitor run`: one process trains with a progress bar and prints its summary; a data-parallel run
does it in the launching process (`--nproc N`: start the ranks and report how they ended) and in each rank
(under `--nproc`'s launcher or `torchrun`: train its part; rank 0 prints the progress and the summary and
records the run). The exit code says how the run ended (core.run.status)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import os
import signal
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from core.base.errors import ConfigError
from core.base.outputs import check_distinct_outputs, check_output_path
from core.base.text import Message
from core.cli.options import (
    PROG,
    checkpoint_policy,
    command_protection,
    config_from_args,
    option_message,
    resumed_config_from_args,
)
from core.cli.stdout import out, save_json
from core.config.run_config import RunConfig
from core.distributed.env import ENV_RANK_DIR, ENV_RUN_UID, RankContext
from core.run.signals import SignalsSeen, stop_on_signals
from core.run.status import EXIT_CODES, EXIT_TERMINATED, EXIT_USER_ERROR, Status

if TYPE_CHECKING:  # torch loads only when a run starts: bad options are reported at once
    from core.run.events import RunFinished


def command_run(args: argparse.Namespace) -> int:
    context = RankContext.from_environment()  # a rank under torchrun or under --nproc's launcher
    config = resumed_config_from_args(args) if args.resume else config_from_args(args)  # UserError -> exit 2
    check_distinct_outputs({"summary_json": args.summary_json, "memory_snapshot": args.memory_snapshot},
                           command_protection(args, [config]))  # never the store, the checkpoint or the data
    if args.sync_bn and context is None and config.nproc == 1:  # an option that would do nothing is refused
        raise ConfigError("sync_bn", Message("synchronises BatchNorm over the processes of a data-parallel run, and "
                                             "this run is one process; add --nproc N (2 or more) or leave --sync-bn "
                                             "out"))
    if context is not None or config.nproc > 1:
        return command_data_parallel(args, config, context)
    checkpoints = checkpoint_policy(args)
    for field in ("summary_json", "memory_snapshot"):  # a bad path fails now, not after the run
        if getattr(args, field):
            check_output_path(field, getattr(args, field))
    from core.cli.progress import ProgressBar
    from core.engine.session import TrainingSession

    if args.memory_snapshot:
        from core.device.devices import resolve_device
        from core.memory.snapshot import unsupported_reason

        reason = unsupported_reason(resolve_device(config.device))
        if reason:
            raise ConfigError("memory_snapshot", reason)
    session = TrainingSession(config, [ProgressBar()], snapshot_path=args.memory_snapshot, checkpoints=checkpoints,
                              resume=args.resume)
    with recording_as_asked(args, session.observers), stop_on_signals(session) as signals:
        finished = session.run()
    return report_finished(args, finished, signals)


def report_finished(args: argparse.Namespace, finished: RunFinished, signals: SignalsSeen) -> int:
    """The end of `run` (or of a data-parallel run's rank 0): the summary JSON, the summary, the exit code."""
    save_error = save_json("summary_json", args.summary_json, finished.summary.to_dict(), "summary")
    if finished.status == "failed" and finished.user_error:
        print(f"{PROG}: error: {option_message(finished.error_field, finished.message)}", file=sys.stderr)
        return EXIT_USER_ERROR
    out(_summary_text(finished))
    if finished.message and finished.status != "completed":
        print(f"{PROG}: {finished.status}: {finished.message}", file=sys.stderr)
    if save_error:
        print(save_error, file=sys.stderr)
        return EXIT_USER_ERROR
    return EXIT_TERMINATED if signals.terminated and finished.status == "stopped" else EXIT_CODES[finished.status]


@contextlib.contextmanager
def recording_as_asked(args: argparse.Namespace, observers: list[Any]) -> Iterator[Any]:
    """Record the run(s) in the store --runs-db names unless --no-record (`run` and `compare`): a store that
    cannot be used is one warning line and the run trains unrecorded. At the end, says where it was recorded."""
    if args.no_record:
        yield None
        return
    from core.store.recorder import recording

    def warn(text: str) -> None:
        print(f"{PROG}: warning: {text}", file=sys.stderr, flush=True)

    recorder = None
    try:
        with recording(observers, args.runs_db, warn) as recorder:
            yield recorder
    finally:  # the recorder is closed (its queue written out): the run ids are final
        if recorder is not None and recorder.run_ids and recorder.problem is None:
            ids = ", ".join(str(run_id) for run_id in recorder.run_ids)
            print(f"recorded as run {ids} in {recorder.path} (`{PROG} runs show {recorder.run_ids[-1]}`)",
                  file=sys.stderr)


def _summary_text(finished: RunFinished) -> str:
    from core.base.text import format_bytes
    from core.run.event_text import batch_size_text

    s = finished.summary
    rate = "n/a" if s.samples_per_s is None else f"{s.samples_per_s:,.0f} images/s"
    loss = ("n/a" if s.loss_first is None else f"{s.loss_first:.4f} -> {s.loss_last:.4f}")
    acc = "n/a" if s.val_accuracy is None else f"{s.val_accuracy:.2%}"
    peak = format_bytes(s.peak_allocated_bytes) + ("" if not s.peak_reserved_bytes
                                                   else f" allocated, {format_bytes(s.peak_reserved_bytes)} reserved")
    return "\n".join([
        f"status      {s.status}",
        f"device      {s.device} ({s.device_name})" + (f", {s.world_size} processes (data-parallel)" if s.world_size > 1 else ""),
        f"steps       {s.steps} ({s.samples} images in {s.wall_s:.1f} s)" if not s.start_step else
        f"steps       {s.steps} (resumed at step {s.start_step}: trained {s.steps - s.start_step} in {s.wall_s:.1f} s)",
        f"batch size  {batch_size_text(s)}",
        f"throughput  {rate}" + ("" if s.compile_s is None else f" (after {s.compile_s:.1f} s compiling)"),
        f"loss        {loss}",
        f"val acc     {acc}",
        f"peak memory {peak}" + ("" if s.peak_reserved_bytes else " (process RSS)"),
    ])


def check_supported(args: argparse.Namespace) -> None:
    """What one process can do and a data-parallel run cannot (yet): said before any rank starts."""
    if args.resume:
        raise ConfigError("resume", "resuming is for one process: a data-parallel run saves no checkpoints; "
                                    "resume the checkpoint without --nproc")
    if args.checkpoint_every:
        raise ConfigError("checkpoint_every", "data-parallel runs (--nproc, torchrun) save no checkpoints; "
                                              "train with one process to checkpoint")
    if args.memory_snapshot:
        raise ConfigError("memory_snapshot", "memory snapshots record one process's allocator: run without "
                                             "--nproc to take one")
    if not args.dist_timeout > 0:
        raise ConfigError("dist_timeout", f"must be more than 0 seconds, got {args.dist_timeout:g}")


def command_data_parallel(args: argparse.Namespace, config: RunConfig, context: RankContext | None) -> int:
    check_supported(args)
    if args.summary_json:
        check_output_path("summary_json", args.summary_json)
    if context is None:
        return _launch(args, config)
    return _rank(args, config, dataclasses.replace(context, timeout_s=args.dist_timeout))


def _launch(args: argparse.Namespace, config: RunConfig) -> int:
    from core.distributed.launcher import launch

    if config.download:  # once, here: N ranks downloading into one folder at once would trip over each other
        import torch

        from core.data.datasets import load_dataset

        load_dataset(config, torch.device("cpu"))
    code, end_line = launch(args.argv, config, on_failure=None if args.no_record else functools.partial(
        mark_failed, args.runs_db))
    if end_line:
        print(f"{PROG}: {end_line}", file=sys.stderr)
    return code


def mark_failed(runs_db: str | None, uid: str, message: str) -> None:
    """The run's record ends `failed` with the rank that caused it (rank 0 may have recorded only the lost
    connection, or nothing, when it was the one killed)."""
    from core.store.run_store import RunStore, StoreError

    try:
        with RunStore(runs_db) as store:
            store.record_failure(uid, message)
    except StoreError as exc:
        print(f"{PROG}: warning: the run's failure is not recorded: {exc}", file=sys.stderr)


def _rank(args: argparse.Namespace, config: RunConfig, context: RankContext) -> int:
    from core.cli.progress import ProgressBar
    from core.distributed.launcher import record_rank_end
    from core.distributed.session import DistributedSession

    config = config.replace(nproc=context.world_size)  # under torchrun the world decides, not --nproc
    observers: list = [ProgressBar()] if context.is_main else []
    session = DistributedSession(config, context, observers, run_uid=os.environ.get(ENV_RUN_UID))
    # the launcher (or torchrun) passes a Ctrl+C on to ranks that got the terminal's too: a repeat is the same
    # stop here; the launcher's SIGKILL after its grace period is the hard abort. Only rank 0 says it stops,
    # and only for a Ctrl+C: a SIGTERM comes from the launcher, also when another rank has failed
    launched = bool(os.environ.get(ENV_RANK_DIR))  # by `--nproc`'s launcher, which says how the run ended
    announce = (signal.SIGINT,) if context.is_main else ()
    with recording_as_asked(args, session.observers) if context.is_main else contextlib.nullcontext():
        with stop_on_signals(session, abort_on_repeat=False, announce=announce) as signals:
            finished = session.run()
        if launched:  # the run is over: the launcher's SIGTERM (another rank failed) must not cut the ending short
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
    record_rank_end(context.rank, finished.status, finished.message, finished.user_error)
    if launched and not finished.user_error:
        finished = dataclasses.replace(finished, message="")  # the launcher says it, naming the rank that caused it
    if not context.is_main:
        if finished.user_error:  # every rank meets it (a missing dataset): rank 0 says it once
            return EXIT_USER_ERROR
        if not Status(finished.status).ended_well and finished.message:  # torchrun's: no launcher of ours
            print(f"{PROG}: rank {context.rank}: {finished.status}: {finished.message}", file=sys.stderr)
        return EXIT_CODES[finished.status]
    return report_finished(args, finished, signals)
