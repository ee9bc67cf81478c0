"""`gpu-train-monitor run`: one process trains with a progress bar and prints its summary; a data-parallel run
does it in the launching process (`--nproc N`: start the ranks and report how they ended) and in each rank
(under `--nproc`'s launcher or `torchrun`: train its part; rank 0 prints the progress and the summary and
records the run). The exit code says how the run ended (gpu_train_monitor.events.status)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..base.errors import ConfigError
from ..base.outputs import check_distinct_outputs, check_output_path
from ..base.text import Message
from ..config.run_config import RunConfig
from ..distributed.env import RankContext, handed_run_uid
from ..events.signals import SignalsSeen, ignore_control_signals, stop_on_signals
from ..events.status import EXIT_CODES, EXIT_TERMINATED, EXIT_USER_ERROR
from .options import (
    PROG,
    checkpoint_policy,
    command_protection,
    config_from_args,
    option_message,
    resumed_config_from_args,
)
from .recording import recording_as_asked
from .stdout import out, save_json
from .summary_text import summary_text

if TYPE_CHECKING:  # torch loads only when a run starts: bad options are reported at once
    from ..events.events import RunFinished

RankEntry = Callable[[list[str]], int]  # a rank's entry point: its command line -> its exit code


def command_run(args: argparse.Namespace, rank_entry: RankEntry) -> int:
    """`run`, here or on another machine; `rank_entry` (a module-level function: it is pickled by name) runs the
    same command line again in each rank of a data-parallel run, which only the CLI's dispatch can do."""
    if getattr(args, "remote", None) or getattr(args, "agent_command", None):  # on another machine, followed here
        from .remote_commands import command_run_remote

        return command_run_remote(args)
    context = RankContext.from_environment()  # a rank under torchrun or under --nproc's launcher
    config = resumed_config_from_args(args) if args.resume else config_from_args(args)  # UserError -> exit 2
    check_distinct_outputs(
        {"summary_json": args.summary_json, "memory_snapshot": args.memory_snapshot}, command_protection(args, [config])
    )  # never the store, the checkpoint or the data
    if args.sync_bn and context is None and config.nproc == 1:  # an option that would do nothing is refused
        raise ConfigError(
            "sync_bn",
            Message(
                "synchronises BatchNorm over the processes of a data-parallel run, and "
                "this run is one process; add --nproc N (2 or more) or leave --sync-bn "
                "out"
            ),
        )
    if context is not None or config.nproc > 1:
        return command_data_parallel(args, config, context, rank_entry)
    checkpoints = checkpoint_policy(args)
    for field in ("summary_json", "memory_snapshot"):  # a bad path fails now, not after the run
        if getattr(args, field):
            check_output_path(field, getattr(args, field))
    from ..engine.session import TrainingSession
    from .progress import ProgressBar

    if args.memory_snapshot:
        from ..device.devices import resolve_device
        from ..memory.snapshot import unsupported_reason

        reason = unsupported_reason(resolve_device(config.device))
        if reason:
            raise ConfigError("memory_snapshot", reason)
    session = TrainingSession(
        config,
        [ProgressBar()],
        snapshot_path=args.memory_snapshot,
        checkpoints=checkpoints,
        resume=args.resume,
        run_uid=handed_run_uid(),  # the agent that started it follows it by this uid
    )
    with recording_as_asked(args, session.observers), stop_on_signals(session) as signals:
        finished = session.run()
    return report_finished(args, finished, signals)


def report_finished(args: argparse.Namespace, finished: RunFinished, signals: SignalsSeen) -> int:
    """The end of `run` (or of a data-parallel run's rank 0): the summary JSON, the summary, the exit code."""
    save_error = save_json("summary_json", args.summary_json, finished.summary.to_dict(), "summary")
    if finished.status == "failed" and finished.user_error:
        print(f"{PROG}: error: {option_message(finished.error_field, finished.message)}", file=sys.stderr)
        return EXIT_USER_ERROR
    out(summary_text(finished.summary))
    if finished.message and finished.status != "completed":
        print(f"{PROG}: {finished.status}: {finished.message}", file=sys.stderr)
    if save_error:
        print(save_error, file=sys.stderr)
        return EXIT_USER_ERROR
    return EXIT_TERMINATED if signals.terminated and finished.status == "stopped" else EXIT_CODES[finished.status]


def check_supported(args: argparse.Namespace) -> None:
    """What one process can do and a data-parallel run cannot (yet): said before any rank starts."""
    if args.resume:
        raise ConfigError(
            "resume",
            "resuming is for one process: a data-parallel run saves no checkpoints; "
            "resume the checkpoint without --nproc",
        )
    if args.checkpoint_every:
        raise ConfigError(
            "checkpoint_every",
            "data-parallel runs (--nproc, torchrun) save no checkpoints; train with one process to checkpoint",
        )
    if args.memory_snapshot:
        raise ConfigError(
            "memory_snapshot", "memory snapshots record one process's allocator: run without --nproc to take one"
        )
    if not args.dist_timeout > 0:
        raise ConfigError("dist_timeout", f"must be more than 0 seconds, got {args.dist_timeout:g}")


def command_data_parallel(
    args: argparse.Namespace, config: RunConfig, context: RankContext | None, rank_entry: RankEntry
) -> int:
    check_supported(args)
    if args.summary_json:
        check_output_path("summary_json", args.summary_json)
    if context is None:
        return _launch(args, config, rank_entry)
    return _rank(args, config)


def _launch(args: argparse.Namespace, config: RunConfig, rank_entry: RankEntry) -> int:
    """Start the ranks (each runs this command line again: `rank_entry`), wait for them, say how the run ended."""
    from ..device.devices import check_process_count
    from ..distributed.launcher import run_ranks, stop_with_window

    if config.download:  # once, here: N ranks downloading into one folder at once would trip over each other
        import torch

        from ..data.datasets import load_dataset

        load_dataset(config, torch.device("cpu"))
    check_process_count(config)
    ignore_control_signals()  # a stray kill -USR1 of the launcher must not end the run
    stop_with_window()
    ended = run_ranks(rank_entry, (args.argv,), config.nproc, uid=handed_run_uid())
    if ended.failure and not ended.user_error and not args.no_record:
        mark_failed(args.runs_db, ended.uid, ended.failure)
    if ended.end_line:
        print(f"{PROG}: {ended.end_line}", file=sys.stderr)
    return ended.code


def mark_failed(runs_db: str | None, uid: str, message: str) -> None:
    """The run's record ends `failed` with the rank that caused it (rank 0 may have recorded only the lost
    connection, or nothing, when it was the one killed)."""
    from ..store.run_store import RunStore, StoreError

    try:
        with RunStore(runs_db) as store:
            store.record_failure(uid, message)
    except StoreError as exc:
        print(f"{PROG}: warning: the run's failure is not recorded: {exc}", file=sys.stderr)


def _rank(args: argparse.Namespace, config: RunConfig) -> int:
    """This process is a rank (under `--nproc`'s launcher or torchrun): rank 0 shows the progress, records the
    run and prints the summary."""
    from ..distributed.rank_process import train_rank
    from .progress import ProgressBar

    return train_rank(
        config,
        args.dist_timeout,
        [ProgressBar()],
        recording=lambda observers: recording_as_asked(args, observers),
        report=lambda finished, signals: report_finished(args, finished, signals),
        line_prefix=f"{PROG}: ",
    )
