"""One rank's process of a data-parallel run, around its session (the training loop with the data-parallel strategy
of gpu_train_monitor.distributed.strategy): the signals that stop it, the recording (rank 0), what the launcher is
told of its end, and the exit code.

Its own module because this is the process's side (the launcher, torchrun and a comparison's relay all start
a rank through `train_rank`), apart from the training loop the ranks agree on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
from collections.abc import Callable, Iterable
from typing import Any

from ..config.run_config import RunConfig
from ..events.events import Observer, RunFinished
from ..events.signals import SignalsSeen, stop_on_signals
from ..events.status import EXIT_USER_ERROR, Status
from .env import ENV_RANK_DIR, ENV_RUN_UID
from .group import RankContext
from .launcher import record_rank_end
from .strategy import data_parallel_session


def train_rank(
    config: RunConfig,
    timeout_s: float,
    main_observers: Iterable[Observer] = (),
    *,
    recording: Callable[[list[Observer]], contextlib.AbstractContextManager[Any]] | None = None,
    controls_ready: Callable[[], None] | None = None,
    report: Callable[[RunFinished, SignalsSeen], int] | None = None,
    line_prefix: str = "",
) -> int:
    """Train this process's rank of a data-parallel run, the one rank body behind `--nproc`'s launcher,
    torchrun and a comparison's relay (the rank's place is in its environment); its exit code. Rank 0 alone
    gets `main_observers`, `recording(observers)` around the run (the run store), `controls_ready()` once its
    signal handlers are in place (the controls are signals) and `report(finished, signals)`, which says how
    the run ended and returns rank 0's exit code. `line_prefix` begins a line another rank says on stderr."""
    context = RankContext.from_environment()
    if context is None:
        raise RuntimeError("train_rank runs in a rank of a data-parallel run (RANK / WORLD_SIZE)")
    context = dataclasses.replace(context, timeout_s=timeout_s)
    config = config.replace(nproc=context.world_size)  # under torchrun the world decides, not --nproc
    session = data_parallel_session(
        config, context, list(main_observers) if context.is_main else [], run_uid=os.environ.get(ENV_RUN_UID)
    )
    # the launcher (or torchrun) passes a Ctrl+C on to ranks that got the terminal's too: a repeat is the same
    # stop here; the launcher's SIGKILL after its grace period is the hard abort. Only rank 0 says it stops,
    # and only for a Ctrl+C: a SIGTERM comes from the launcher, also when another rank has failed
    launched = bool(os.environ.get(ENV_RANK_DIR))  # by our launcher, which says how the run ended
    announce = (signal.SIGINT,) if context.is_main else ()
    recorded = recording(session.observers) if recording is not None and context.is_main else contextlib.nullcontext()
    with recorded:
        with stop_on_signals(session, abort_on_repeat=False, announce=announce) as signals:
            if context.is_main and controls_ready is not None:
                controls_ready()
            finished = session.run()
        if launched:  # the run is over: the launcher's SIGTERM (another rank failed) must not cut the ending short
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
    record_rank_end(context.rank, finished.status, finished.message, finished.user_error)
    if launched and not finished.user_error:
        finished = dataclasses.replace(finished, message="")  # the launcher says it, naming the rank that caused it
    if context.is_main and report is not None:
        return report(finished, signals)
    if finished.user_error:  # every rank meets it (a missing dataset): rank 0 says it once
        return EXIT_USER_ERROR
    if not Status(finished.status).ended_well and finished.message:  # torchrun's: no launcher of ours
        print(f"{line_prefix}rank {context.rank}: {finished.status}: {finished.message}", file=sys.stderr)
    return Status(finished.status).exit_code
