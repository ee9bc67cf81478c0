"""Where a data-parallel rank learns its place, without importing torch (the CLI reads it before torch loads).

torch.distributed's launchers (`torchrun`, and the elastic launch API behind it that `--nproc` uses) give
each worker RANK, WORLD_SIZE, LOCAL_RANK and the rendezvous address in its environment; `--nproc`'s launcher
adds the run's name (the window hands a launcher it starts the name to use) and a folder where each rank says
how it ended.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

ENV_RUN_UID = "GPU_TRAIN_MONITOR_RUN_UID"  # the launcher names the run: every rank (and the launcher) knows it
ENV_RANK_DIR = "GPU_TRAIN_MONITOR_RANK_DIR"  # where each rank writes how it ended
ENV_STOP_WITH_PID = "GPU_TRAIN_MONITOR_STOP_WITH_PID"  # the window that started a launcher: it stops with it
DEFAULT_TIMEOUT_S = 120.0


def handed_run_uid() -> str | None:
    """The name a launching process was handed for its run (ENV_RUN_UID: the window's, which finds the run in
    its store by it), or None; taken out of the environment, as it names one run only."""
    return os.environ.pop(ENV_RUN_UID, None) or None


@dataclass(frozen=True)
class RankContext:
    """This process's place in a data-parallel run."""

    rank: int
    world_size: int
    local_rank: int
    timeout_s: float = DEFAULT_TIMEOUT_S

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @classmethod
    def from_environment(cls) -> RankContext | None:
        """The rank a launcher started this process as; None outside a launcher (or a world of one)."""
        try:
            world = int(os.environ.get("WORLD_SIZE", "1"))
            rank = int(os.environ.get("RANK", "0"))
            local = int(os.environ.get("LOCAL_RANK", str(rank)))
        except ValueError:
            return None
        return cls(rank, world, local) if world > 1 else None
