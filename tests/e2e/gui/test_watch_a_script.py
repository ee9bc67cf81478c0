"""File ▸ Watch a script…, for real: the window starts an unchanged training script of the user's (a plain
PyTorch loop written here) under `python -m gpu_train_monitor watch --`, follows it live as it trains (its steps and
losses in the window's plot and numbers, its run opened in the Runs tab), Pause and Clear cache reach it, and the
window's Stop stops it: the run ends `stopped` in the store with every step it recorded shown, no process of it
is left, and its own output is kept where the log says. (One script run: each start imports torch twice, the
watch's and the script's.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from gpu_train_monitor.gui.views.window_state import WindowState
from gpu_train_monitor.gui.window.main_window import MainWindow
from gpu_train_monitor.store.run_store import RunStore
from tests.support.processes import left_alive

START_TIMEOUT_MS = 45_000  # the watch and the script each import torch on a shared 2-core machine

TRAIN_SCRIPT = """\
import argparse
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=200)
parser.add_argument("--sleep", type=float, default=0.0)
args = parser.parse_args()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(64, 16), torch.randn(64, 1)
print(f"training {args.steps} steps", flush=True)
for step in range(args.steps):
    loss = torch.nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    time.sleep(args.sleep)
"""


@pytest.fixture
def script(tmp_path) -> Path:
    """train.py in a research folder with its own `core/` package, as many have: the window's `-m gpu_train_monitor`
    must not import that one (the script's folder is where the watch starts)."""
    path = tmp_path / "project" / "train.py"
    (path.parent / "core").mkdir(parents=True)
    (path.parent / "core" / "__init__.py").write_text('raise ImportError("the project\'s own core")\n')
    path.write_text(TRAIN_SCRIPT, encoding="utf-8")
    return path


@pytest.fixture
def window(qtbot, settings, tmp_path):
    window = MainWindow(settings=settings, runs_db=str(tmp_path / "runs.sqlite3"))
    qtbot.addWidget(window)  # closed at teardown: a script still going is stopped and its processes killed
    window.show()  # no torch needed in the window to watch a script
    yield window
    window.controller.launcher.kill_now()


def watch(qtbot, window: MainWindow, script: Path, arguments: str) -> int:
    """File ▸ Watch a script…, the script and its arguments typed, Watch pressed; the recorded run's id once the
    window follows it."""
    assert window.parts.menus.watch_action.isEnabled()
    window.parts.menus.watch_action.trigger()
    dialog = window.parts.menus.watch_dialog
    qtbot.waitUntil(dialog.isVisible)
    dialog.script_edit.setText(str(script))
    dialog.arguments_edit.setText(arguments)
    qtbot.mouseClick(dialog.watch_button, Qt.MouseButton.LeftButton)
    assert dialog.problem == "" and not dialog.isVisible()
    assert window.state is WindowState.STARTING and window.controller.running
    assert not window.parts.menus.watch_action.isEnabled() and window.parts.buttons.stop_button.isEnabled()
    launcher = window.controller.launcher
    qtbot.waitUntil(lambda: launcher.run_id is not None or not launcher.running, timeout=START_TIMEOUT_MS)
    assert launcher.run_id is not None, "\n".join(
        window.parts.view.log.lines()
    )  # it ended unrecorded: the log says why
    return launcher.run_id


def recorded(tmp_path: Path, run_id: int, kinds: tuple[str, ...]) -> list[str]:
    with RunStore(tmp_path / "runs.sqlite3", readonly=True) as store:
        return [event.kind for event in store.events(run_id, kinds=kinds)]


def test_the_window_follows_a_watched_script_live_steers_it_and_its_stop_stops_it(qtbot, window, script, tmp_path):
    run_id = watch(qtbot, window, script, "--steps 1000000 --sleep 0.005")
    assert window.state is WindowState.RUNNING and window.parts.tabs.currentWidget() is window.parts.history
    qtbot.waitUntil(
        lambda: len(window.parts.view.loss_plot.data) >= 20, timeout=START_TIMEOUT_MS
    )  # live, from the store
    assert len(window.parts.view.memory_plot.data) > 0
    assert re.fullmatch(r"\d+", window.parts.view.stats.values["step"].text())  # steps done: the script gives no total
    assert window.parts.view.stats.values["eta"].text() == "–" and window.parts.view.stats.values["epoch"].text() == "–"
    assert window.parts.history.views[run_id].isVisible()  # the run's own window, steered from here
    processes = window.controller.launcher.processes()
    with RunStore(tmp_path / "runs.sqlite3", readonly=True) as store:
        row = store.run(run_id)
    assert row.status == "running" and row.pid in {p.pid for p in processes}

    qtbot.mouseClick(
        window.parts.buttons.pause_button, Qt.MouseButton.LeftButton
    )  # SIGUSR2: the script blocks in its step
    qtbot.waitUntil(lambda: window.state is WindowState.PAUSED, timeout=10_000)  # once the run recorded it
    assert window.parts.buttons.pause_button.text() == "Resume"
    qtbot.mouseClick(window.parts.buttons.pause_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.state is WindowState.RUNNING, timeout=10_000)
    assert (
        not window.parts.buttons.clear_button.isEnabled()
    )  # the script trains on the CPU: no cache; the signal reaches it:
    window.controller.request_cache_clear()  # SIGUSR1, applied at its next optimizer step
    qtbot.waitUntil(lambda: recorded(tmp_path, run_id, ("CacheCleared",)) == ["CacheCleared"], timeout=10_000)
    assert recorded(tmp_path, run_id, ("RunPaused", "RunResumed")) == ["RunPaused", "RunResumed"]

    with qtbot.waitSignal(window.run_ended, timeout=START_TIMEOUT_MS) as ended:
        qtbot.mouseClick(window.parts.buttons.stop_button, Qt.MouseButton.LeftButton)  # SIGINT to the script's process
    assert ended.args == [WindowState.STOPPED]
    with RunStore(tmp_path / "runs.sqlite3", readonly=True) as store:
        row, steps = store.run(run_id), store.steps(run_id)
    assert row.status == "stopped" and row.steps >= 20
    assert left_alive(processes) == []
    assert len(window.parts.view.loss_plot.data) == len(steps.losses) == row.steps  # every recorded step, shown
    run_window = window.parts.history.views[run_id]  # its own window too, once it has read the end
    qtbot.waitUntil(lambda: len(run_window.loss_plot.data) == row.steps, timeout=10_000)
    assert window.parts.view.stats.values["step"].text() == str(row.steps)
    log = "\n".join(window.parts.view.log.lines())
    assert f"run {run_id} stopped" in log and window.parts.menus.watch_action.isEnabled()
    output = window.controller.launcher.log_path  # the script's own output, kept whatever its end
    assert output is not None and "training 1000000 steps" in output.read_text(encoding="utf-8")
    assert f"the script's output is in {output}" in log
