"""The headless parts run where Qt cannot load: a GPU server without display libraries installs PySide6 (a
dependency) but cannot import it. The installed `gpu-train-monitor` command trains, serves as the agent and
watches a script in processes whose every import of PySide6, shiboken6 or pyqtgraph fails, as it fails there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import ENV
from tests.support.sshd import gpu_train_monitor_script

# Put first on PYTHONPATH, Python's `site` runs it in every process of the command (the watched script's too: the
# watch's own start-up file runs the sitecustomize it hides). Each blocked import fails as a missing libGL does.
BLOCKER = """\
import sys

BLOCKED = ("PySide6", "shiboken6", "pyqtgraph")


class NoDisplayLibraries:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name}: libEGL.so.1: cannot open shared object file (blocked by the test)")
        return None


sys.meta_path.insert(0, NoDisplayLibraries())
"""
TRAIN = """\
import sys
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = nn.functional.cross_entropy(model(torch.randn(8, 4)), torch.randint(0, 2, (8,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("qt loaded:", any(name.split(".")[0] in ("PySide6", "pyqtgraph") for name in sys.modules))
"""


@pytest.fixture
def no_qt_env(tmp_path: Path) -> dict[str, str]:
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    return {**ENV, "PYTHONPATH": str(blocker), "GPU_TRAIN_MONITOR_RUNS_DB": str(tmp_path / "runs.sqlite3")}


def app(args: list[str], env: dict[str, str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(gpu_train_monitor_script()), *args],
        input=stdin,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_the_blocker_makes_qt_unimportable(no_qt_env: dict[str, str], tmp_path: Path) -> None:
    code = "import PySide6"
    result = subprocess.run([sys.executable, "-c", code], env=no_qt_env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "libEGL.so.1" in result.stderr


def test_run_agent_and_watch_need_no_qt(no_qt_env: dict[str, str], tmp_path: Path) -> None:
    ran = app(["run", "--device", "cpu", "--max-steps", "2"], no_qt_env, tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]

    agent = app(["agent"], no_qt_env, tmp_path)  # end of input at once: it says hello and ends
    assert agent.returncode == 0, agent.stderr[-2000:]
    assert json.loads(agent.stdout.splitlines()[0])["hello"]["protocol"] >= 1

    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    watched = app(["watch", "--", sys.executable, "train.py"], no_qt_env, tmp_path)
    assert watched.returncode == 0, watched.stderr[-2000:]
    assert "qt loaded: False" in watched.stdout

    listed = app(["runs", "list", "--json"], no_qt_env, tmp_path)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert sorted(run["steps"] for run in json.loads(listed.stdout)) == [2, 3]  # both runs recorded in full


def test_the_window_without_qt_says_so_in_one_line(no_qt_env: dict[str, str], tmp_path: Path) -> None:
    shown = app(
        ["--screenshot", str(tmp_path / "x.png"), "--steps", "1"],
        {**no_qt_env, "QT_QPA_PLATFORM": "offscreen"},
        tmp_path,
    )
    assert shown.returncode == 2
    assert shown.stderr.startswith("gpu-train-monitor: error: the window cannot open: Qt could not be loaded (")
    assert len(shown.stderr.splitlines()) == 1 and "gpu-train-monitor run" in shown.stderr
