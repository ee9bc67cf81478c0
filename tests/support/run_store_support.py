"""Recorded runs for the history tests: real sessions recorded into a store of the test's own."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.store.recorder import RunRecorder

ROOT = Path(__file__).resolve().parents[2]
# a run of a second on the CPU: tiny-cnn, a few hundred synthetic images
SHORT = RunConfig(
    model="tiny-cnn", device="cpu", synthetic_samples=256, batch_size=32, max_steps=12, report_interval=0.02
)


def record_run(path: Path, config: RunConfig = SHORT) -> int:
    """Train `config` in this process, recorded in the store at `path`; returns the run's id."""
    recorder = RunRecorder(path)
    try:
        TrainingSession(config, [recorder]).run()
    finally:
        recorder.close()
    assert recorder.run_id is not None and recorder.problem is None
    return recorder.run_id


def start_cli_run(path: Path, max_steps: int = 400) -> subprocess.Popen:
    """`python -m gpu_train_monitor run ...` recording into `path`: a run started in a terminal, watched by the window.
    One torch thread, as the tests' own runs (a 2-core machine is shared with this test). Its output (the
    progress bar) goes to cli.log beside the store: a pipe nobody reads would fill and stop the run."""
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    with open(path.parent / "cli.log", "wb") as log:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gpu_train_monitor",
                "run",
                "--model",
                "tiny-cnn",
                "--device",
                "cpu",
                "--max-steps",
                str(max_steps),
                "--synthetic-samples",
                "512",
                "--batch-size",
                "16",
                "--runs-db",
                str(path),
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def cli_output(path: Path) -> str:
    """What the CLI run recording into `path` printed (for a failing test's message)."""
    log = path.parent / "cli.log"
    return log.read_text(errors="replace") if log.exists() else ""


def kill(process: subprocess.Popen) -> None:
    """kill -9 (a closed terminal, an OOM killer): the run is left `running` in the store until noticed."""
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.wait(30)


def copy_store(source: Path, target: Path) -> Path:
    """A copy of the store at `source` (its WAL too, if one is left) at `target`, for a test to change."""
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{source}{suffix}").exists():
            shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")
    return target


def make_panel(qtbot, path: Path):
    """A history panel on the store at `path`, with live plots to overlay on, shown in one widget (the
    caller stops it at the end: its timers, opened windows and store). The widget holding them lives as long
    as the panel's Python object (qtbot holds widgets weakly)."""
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from gpu_train_monitor.gui.history.panel import HistoryPanel
    from gpu_train_monitor.gui.plots.loss_plot import LossPlot
    from gpu_train_monitor.gui.plots.memory_plot import MemoryPlot

    host = QWidget()
    qtbot.addWidget(host)
    loss_plot, memory_plot = LossPlot(), MemoryPlot()
    panel = HistoryPanel(path, loss_plot, memory_plot)
    layout = QVBoxLayout(host)
    for widget in (loss_plot, memory_plot, panel):
        layout.addWidget(widget)
    host.resize(1100, 900)
    host.show()
    panel.test_host = host
    return panel


def table_texts(panel, column: str) -> list[str]:
    """The texts of one column of the panel's table, top to bottom, as shown."""
    from gpu_train_monitor.gui.history.table_model import KEYS

    proxy = panel.proxy
    return [proxy.index(row, KEYS.index(column)).data() for row in range(proxy.rowCount())]
