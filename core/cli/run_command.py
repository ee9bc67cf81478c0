"""`run` for a data-parallel run: in the launching process (`--nproc N`: start the ranks and report how
they ended) and in each rank (under `--nproc`'s launcher or `torchrun`: train its part; rank 0 prints the
progress and the summary and records the run)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import signal
import sys

from core.base.errors import ConfigError
from core.base.outputs import check_output_path
from core.cli.main import recording, report_finished
from core.cli.options import EXIT_CODES, EXIT_USER_ERROR, PROG
from core.config.run_config import RunConfig
from core.distributed.env import ENV_RANK_DIR, ENV_RUN_UID, RankContext
from core.run.signals import stop_on_signals
from core.run.status import Status


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
    code, end_line = launch(args.argv, config, record=not args.no_record, runs_db=args.runs_db)
    if end_line:
        print(f"{PROG}: {end_line}", file=sys.stderr)
    return code


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
    with recording(args, session.observers) if context.is_main else contextlib.nullcontext():
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
