"""The launcher's watch over its ranks (gpu_train_monitor.distributed.rank_watch): the others are killed within the
promised grace once one rank has ended, and a launcher killed before it could tidy up has its folder removed by the next
one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from gpu_train_monitor.distributed.env import ENV_RUN_UID
from gpu_train_monitor.distributed.rank_watch import FOLDER_PREFIX, RankWatch, make_rank_folder


def fake_rank(code: str, uid: str) -> subprocess.Popen[bytes]:
    """A child that looks like one of the launcher's spawned ranks of run `uid`."""
    return subprocess.Popen([sys.executable, "-c", code, "spawn_main"], env={**os.environ, ENV_RUN_UID: uid})


def test_once_a_rank_has_ended_one_that_ignores_sigterm_is_killed_after_the_grace() -> None:
    uid = "watched-run"
    hung = fake_rank("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)", uid)
    failing = fake_rank("import sys, time; time.sleep(1.0); sys.exit(1)", uid)
    other_run = fake_rank("import time; time.sleep(60)", "another-run")
    try:
        with RankWatch(uid, grace_s=1.0) as watch:
            failing.wait(timeout=30)
            ended_at = time.monotonic()
            hung.wait(timeout=30)
            took = time.monotonic() - ended_at
        assert hung.returncode == -signal.SIGKILL and watch.killed == [hung.pid]
        assert 0.5 < took < 10
        assert other_run.poll() is None  # not one of this run's ranks
    finally:
        for process in (hung, failing, other_run):
            process.kill()
            process.wait()


def test_a_killed_launcher_s_folder_is_removed_by_the_next_launch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a launcher that no longer runs (killed by SIGKILL: it could not remove its folder)
    orphan = tmp_path / f"{FOLDER_PREFIX}{gone.pid}-abc"
    (orphan / "torchelastic").mkdir(parents=True)
    running = tmp_path / f"{FOLDER_PREFIX}{os.getppid()}-def"  # a launcher still at work
    running.mkdir()
    unrelated = tmp_path / "someone-elses-folder"
    unrelated.mkdir()
    folder = Path(make_rank_folder())
    assert folder.parent == tmp_path and folder.name.startswith(f"{FOLDER_PREFIX}{os.getpid()}-")
    assert not orphan.exists() and running.is_dir() and unrelated.is_dir()
