"""Exporting a recorded run from the Runs tab happens in a thread of its own: the window goes on meanwhile,
one export runs at a time, its result or its failure shows in the panel, and closing the window mid-export
cancels it without leaving a thread behind."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path

import pytest

from tests.support.gui_support import running_qthreads
from tests.support.run_store_support import SHORT, copy_store, make_panel, record_run

EXPORT_TIMEOUT_MS = 60_000
LONG_STEPS = 200_000  # reading these for an export takes a second or more: long enough to close mid-read


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, int]:
    """One finished run, recorded once for the module."""
    path = tmp_path_factory.mktemp("export") / "runs.sqlite3"
    return path, record_run(path, SHORT)


@pytest.fixture
def store_path(recorded, tmp_path) -> Path:
    return copy_store(recorded[0], tmp_path / "runs.sqlite3")


@pytest.fixture
def panel(qtbot, store_path):
    panel = make_panel(qtbot, store_path)
    yield panel
    panel.stop()


def lengthen(path: Path, run_id: int, steps: int) -> None:
    """Give the run `steps` more steps, as a long run would have recorded (written directly: training them
    would take minutes)."""
    db = sqlite3.connect(path)
    with db:
        last = db.execute("SELECT max(step) FROM steps WHERE run_id = ?", (run_id,)).fetchone()[0]
        db.executemany(
            "INSERT INTO steps (run_id, step, epoch, loss) VALUES (?, ?, 1, ?)",
            ((run_id, step, 1.0 / step) for step in range(last + 1, last + 1 + steps)),
        )
    db.close()


def test_an_export_runs_in_the_background_one_at_a_time(qtbot, panel, recorded, tmp_path):
    _, run_id = recorded
    pipe = tmp_path / "run.json"
    os.mkfifo(pipe)  # the export's write waits for a reader: it is under way until the test reads it
    messages: list[str] = []
    panel.message.connect(messages.append)
    panel.select(run_id)
    assert panel.edits.export(run_id, "json", pipe)
    qtbot.wait(200)  # the window handles events meanwhile
    exporter = panel.edits.exporter
    assert exporter.running
    assert messages == [f"exporting run {run_id} as JSON…"]
    assert messages[0] in panel.info.text()
    assert not panel.export_action.isEnabled() and not panel.export_button.isEnabled()
    assert "one export at a time" in panel.export_button.toolTip()
    assert not panel.edits.export(run_id, "csv", tmp_path / "csv")  # refused, not queued
    assert "still exporting run" in panel.info.text()

    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()), daemon=True)
    with qtbot.waitSignal(exporter.ended, timeout=EXPORT_TIMEOUT_MS):
        reader.start()
    reader.join(10)
    if reader.is_alive():  # the export ended without opening the pipe: let the reader go, then fail
        os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
    document = json.loads(received[0])
    assert document["run"]["id"] == run_id and len(document["steps"]["step"]) == 12
    assert messages[-1] == f"exported run {run_id} to {tmp_path}: run.json"
    assert "exported run" in panel.info.text()
    assert panel.export_action.isEnabled() and panel.export_button.isEnabled()  # the next one may start
    assert not (tmp_path / "csv").exists()  # the refused export wrote nothing


def test_an_export_of_a_run_deleted_meanwhile_says_so(qtbot, panel, store_path, recorded, tmp_path):
    _, run_id = recorded
    db = sqlite3.connect(store_path)
    with db:
        db.execute("DELETE FROM runs WHERE id = ?", (run_id,))  # `runs delete` in a terminal, say
    db.close()
    with qtbot.waitSignal(panel.edits.exporter.ended, timeout=EXPORT_TIMEOUT_MS):
        assert panel.edits.export(run_id, "tensorboard", tmp_path / "logs")
    assert f"export failed: no run {run_id} in" in panel.info.text()
    assert "Traceback" not in panel.info.text()
    assert not (tmp_path / "logs").exists()


def test_closing_mid_export_cancels_it_and_leaves_no_thread(qtbot, store_path, recorded, tmp_path):
    _, run_id = recorded
    lengthen(store_path, run_id, LONG_STEPS)
    panel = make_panel(qtbot, store_path)
    reported: list[str] = []
    panel.message.connect(reported.append)
    out = tmp_path / "out"
    assert panel.edits.export(run_id, "csv", out)
    panel.stop()  # what the window's closeEvent does
    assert running_qthreads() == []  # at once: stop() waited for the thread
    assert not panel.edits.exporter.running
    assert not list(out.glob("*.csv"))  # cancelled while it read the steps: nothing written
    qtbot.wait(100)  # what the cancelled thread left queued is not reported to a closed panel
    assert reported == [f"exporting run {run_id} as CSV…"]


def test_an_export_over_the_store_itself_is_refused_in_the_window(qtbot, panel, store_path, recorded):
    _, run_id = recorded
    before = store_path.read_bytes()
    with qtbot.waitSignal(panel.edits.exporter.ended, timeout=EXPORT_TIMEOUT_MS):
        assert panel.edits.export(run_id, "json", store_path)
    assert f"export failed: {store_path} is the run store; give another path" in panel.info.text()
    assert store_path.read_bytes() == before


def make_live(path: Path, run_id: int) -> int:
    """Mark the run as still training in this process (its heartbeat fresh), as a run under way is; returns
    its last recorded step."""
    import socket
    import time

    db = sqlite3.connect(path)
    with db:
        db.execute(
            "UPDATE runs SET status = 'running', pid = ?, host = ?, heartbeat_at = ?, finished_at = NULL WHERE id = ?",
            (os.getpid(), socket.gethostname(), time.time(), run_id),
        )
        steps = db.execute("SELECT steps FROM runs WHERE id = ?", (run_id,)).fetchone()[0]
    db.close()
    return steps


def test_exporting_a_live_run_says_it_is_partial_and_up_to_which_step(qtbot, panel, recorded, store_path, tmp_path):
    _, run_id = recorded
    steps = make_live(store_path, run_id)
    panel.refresh()
    messages: list[str] = []
    panel.message.connect(messages.append)
    assert panel.edits.export(run_id, "json", tmp_path / "live.json")
    qtbot.waitUntil(lambda: any(text.startswith("exported") for text in messages), timeout=EXPORT_TIMEOUT_MS)
    assert f"(partial: the run is live, exported up to step {steps})" in messages[-1]
    assert json.loads((tmp_path / "live.json").read_text())["steps"]["step"][-1] == steps
