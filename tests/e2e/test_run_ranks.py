"""The one launcher, `run_ranks(entry, args, nproc, uid)`: it runs the entry point it is given (pickled by name
into spawned workers) in every rank, under the uid its caller chose, and names the rank that failed
(gpu_train_monitor.distributed.launcher)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from gpu_train_monitor.distributed.env import ENV_RUN_UID
from gpu_train_monitor.distributed.launcher import record_rank_end, run_ranks


def rank_entry(folder: str, failing_rank: int) -> int:
    """A rank: says which run it belongs to, and fails when it is `failing_rank`."""
    rank = int(os.environ["RANK"])
    Path(folder, f"rank-{rank}.uid").write_text(os.environ[ENV_RUN_UID])
    if rank == failing_rank:
        deadline = time.monotonic() + 60  # once every rank has written (the launcher then stops the others)
        while len(list(Path(folder).glob("*.uid"))) < int(os.environ["WORLD_SIZE"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        record_rank_end(rank, "failed", "RuntimeError: this rank broke")
        return 1
    return 0


def test_the_ranks_run_the_given_entry_under_the_caller_s_uid_and_the_failing_rank_is_named(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    ended = run_ranks(rank_entry, (str(tmp_path), 1), 2, uid="handed-by-the-window")
    assert ended.uid == "handed-by-the-window" and ended.code == 1 and not ended.user_error
    assert ended.failure == "rank 1 ended the run (failed): RuntimeError: this rank broke"
    assert ended.end_line == f"failed: {ended.failure}"
    assert {path.name: path.read_text() for path in tmp_path.glob("*.uid")} == {
        "rank-0.uid": "handed-by-the-window",
        "rank-1.uid": "handed-by-the-window",
    }
    assert ENV_RUN_UID not in os.environ  # the launcher's environment is as it was
