"""A recorded run opened in its own window: a finished run shows what was recorded (its losses exactly), a
run training in another process (the CLI) is followed while it trains and shows how it ended once killed."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events import event_text
from gpu_train_monitor.events.events import (
    CheckpointSaved,
    MemoryBreakdown,
    RankSample,
    RunFinished,
    RunStarted,
    StepsReported,
)
from gpu_train_monitor.gui.history.feed import StoreLink
from gpu_train_monitor.gui.history.run_window import StoredRunView
from gpu_train_monitor.memory.probe import MemoryProbe
from gpu_train_monitor.store.recorder import RunRecorder
from gpu_train_monitor.store.run_store import RunStore
from tests.support.run_store_support import SHORT, cli_output, kill, make_panel, record_run, start_cli_run, table_texts

LIVE_TIMEOUT_MS = 120_000  # the CLI process imports torch and builds its run: slow on a busy 2-core machine


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("stored") / "runs.sqlite3"
    return path, record_run(path, SHORT.replace(max_steps=16, epochs=2))  # 2 epochs of 8 steps


@pytest.fixture
def open_view(qtbot):
    """Open run views on a store (closed, with their store, at the end)."""
    made: list[tuple[StoredRunView, StoreLink]] = []

    def make(path: Path, run_id: int) -> StoredRunView:
        link = StoreLink(path)
        view = StoredRunView(link, run_id)
        qtbot.addWidget(view)
        view.show()
        made.append((view, link))
        qtbot.waitUntil(lambda: not view.loading, timeout=10_000)  # read in the background
        return view

    yield make
    for view, link in made:
        view.close()
        link.close()


def test_a_finished_run_shows_what_was_recorded(finished, open_view):
    path, run_id = finished
    view = open_view(path, run_id)
    with RunStore(path) as store:
        series, reports, row = store.steps(run_id), store.reports(run_id), store.run(run_id)
        epochs = store.events(run_id, kinds=("EpochEnded",))
    view.draw_now()
    assert list(view.loss_plot.data.column(0)) == list(series.steps)
    assert np.array_equal(view.loss_plot.data.column(1), np.array(series.losses), equal_nan=True)
    x, y = view.loss_plot.raw_curve.getData()  # short: drawn as it is, every step
    assert list(x) == list(series.steps) and np.allclose(y, series.losses, equal_nan=True)
    assert len(view.memory_plot.data) == len(reports) + 1  # the reading at the start, then one per report
    assert view.memory_plot.data.column(0)[-1] == pytest.approx(reports[-1].elapsed_s)
    assert view.memory_plot.data.column(1)[-1] == reports[-1].allocated_bytes
    assert len(view.rates) == len(reports)
    timed = [report for report in reports if report.phases is not None]  # the store keeps each report's split
    assert timed and view.step_time.reports == len(reports) and view.step_time.latest == timed[-1].phases
    assert view.tabs.indexOf(view.step_time) == view.tabs.indexOf(view.breakdown_view) + 1  # as in the window
    assert len(epochs) == 2 and len(view.loss_plot._epoch_lines) == 2
    assert view.breakdown_view.last is not None  # the last breakdown recorded
    assert view.stats.values["step"].text() == "16 / 16"
    # the run's own figures, as its Runs row and its log line give them (not the last report's)
    assert view.stats.values["peak"].text() == format_bytes(row.peak_allocated_bytes)
    assert view.stats.values["speed"].text() == f"{row.samples_per_s:,.0f}"
    assert "completed" in view.header.text() and "recorded by pid" in view.header.text()
    log = view.log.toPlainText()
    assert "training tiny-cnn on cpu" in log and "epoch 2: train loss" in log and "finished: 16 steps" in log
    assert "max_steps = 16" in view.config_text.toPlainText().splitlines()
    assert not view.following and not view.poll_timer.isActive()  # a finished run is read once
    assert row.status == "completed" and math.isfinite(row.loss_last)


def test_a_cache_clear_is_marked_and_its_reading_falls_between_the_reports(open_view, tmp_path):
    path = tmp_path / "runs.sqlite3"
    recorder = RunRecorder(path)
    session = TrainingSession(SHORT, [])  # 12 steps: reports before and after the clear

    def clear_once(event: object) -> None:
        if isinstance(event, StepsReported) and event.step >= 4 and not cleared:
            cleared.append(event.step)
            session.request_cache_clear()  # applied at the next step boundary, as the window's button does

    cleared: list[int] = []
    session.observers.extend([clear_once, recorder])
    session.run()
    recorder.close()
    view = open_view(path, recorder.run_id)
    with RunStore(path) as store:
        reports = store.reports(recorder.run_id)
        clears = store.events(recorder.run_id, kinds=("CacheCleared",))
    assert len(clears) == 1
    seconds = view.memory_plot.data.column(0)
    assert len(seconds) == len(reports) + 2  # the start's reading, the reports', the clear's
    assert np.all(np.diff(seconds) >= 0)  # in time order: the plot decimates by searching its x
    assert [marker.label.toPlainText() for marker in view.memory_plot.markers] == ["cleared 0 B"]
    assert f"cache cleared at step {clears[0].step}" in view.log.toPlainText()


def test_a_deleted_run_is_a_line_in_the_view_not_an_error(finished, open_view, tmp_path):
    import shutil

    path = tmp_path / "runs.sqlite3"
    shutil.copyfile(finished[0], path)
    view = open_view(path, finished[1])
    with RunStore(path) as store:
        store.delete(finished[1])
    view.poll()
    assert view.problem.isVisibleTo(view) and "no longer in the store" in view.problem.text()


def test_a_run_started_in_a_terminal_is_followed_live_then_shown_interrupted(qtbot, tmp_path):
    path = tmp_path / "runs.sqlite3"
    process = start_cli_run(path, max_steps=400)
    panel = make_panel(qtbot, path)
    try:
        try:
            qtbot.waitUntil(
                lambda: "live" in table_texts(panel, "status") or process.poll() is not None, timeout=LIVE_TIMEOUT_MS
            )
        except qtbot.TimeoutError:
            pytest.fail(f"the CLI run never showed as live: {panel.info.text()}\n{cli_output(path)}")
        assert process.poll() is None, cli_output(path)
        run_id = panel.proxy.visible_ids()[0]
        view = panel.open_run(run_id)
        qtbot.waitUntil(lambda: not view.loading, timeout=10_000)
        assert view.following and view.poll_timer.isActive()
        assert f"watching run {run_id} started by pid {process.pid}" in view.header.text()
        panel.set_overlay(run_id, True)  # an overlay of a live run grows too
        qtbot.waitUntil(lambda: len(view.loss_plot.data) > 0, timeout=30_000)
        seen = len(view.loss_plot.data)
        overlaid = len(panel.overlays.overlays[run_id].losses)
        qtbot.waitUntil(lambda: len(view.loss_plot.data) >= seen + 20, timeout=30_000)  # more steps, poll after poll
        qtbot.waitUntil(lambda: len(panel.overlays.overlays[run_id].losses) > overlaid, timeout=10_000)
        assert view.stats.values["step"].text().endswith("/ 400")
        kill(process)
        qtbot.waitUntil(lambda: not view.following, timeout=10_000)
        assert view.row.status == "interrupted" and not view.poll_timer.isActive()
        assert "interrupted" in view.header.text() and "interrupted" in view.stats.state_label.text()
        assert "interrupted at step" in view.log.toPlainText()
        with RunStore(path) as store:  # what the window shows is what the store kept
            assert len(view.loss_plot.data) == len(store.steps(run_id).steps) == store.run(run_id).steps
        panel.refresh()
        assert table_texts(panel, "status") == ["interrupted"]
    finally:
        kill(process)
        panel.stop()


# ---- a data-parallel run: what rank 0 of a 2-process run records ------------------------------------------
RANK1_EXTRA_BYTES = 64 * 10**6  # rank 1 holds more than rank 0: its lines can be told apart
RANK_SHARES = (0.55, 0.45)  # each rank's part of the run's images/s


def as_data_parallel(events: list) -> list:
    """A real run's events as rank 0 of a 2-process CPU run emits them: world size 2, on each report rank 0's
    own sample and a real reading of this process 64 MB higher for rank 1, each its share of the images/s; a
    breakdown per rank (rank 1's parameters doubled); the summary's per-rank images/s."""
    probe = MemoryProbe("cpu")
    parallel: list = []
    for event in events:
        match event:
            case RunStarted():
                parallel.append(dataclasses.replace(event, world_size=2, rank_devices=("cpu", "cpu")))
            case StepsReported():
                other = probe.sample()
                other = dataclasses.replace(
                    other,
                    allocated_bytes=other.allocated_bytes + RANK1_EXTRA_BYTES,
                    peak_allocated_bytes=other.peak_allocated_bytes + RANK1_EXTRA_BYTES,
                )
                ranks = (
                    RankSample(0, "cpu", event.samples_per_s * RANK_SHARES[0], event.memory),
                    RankSample(1, "cpu", event.samples_per_s * RANK_SHARES[1], other),
                )
                parallel.append(dataclasses.replace(event, ranks=ranks))
            case MemoryBreakdown():
                parallel += [event, dataclasses.replace(event, rank=1, params_bytes=2 * event.params_bytes)]
            case RunFinished():
                total = event.summary.samples_per_s or 0.0
                summary = dataclasses.replace(
                    event.summary,
                    world_size=2,
                    ranks=tuple(
                        {
                            "rank": rank,
                            "device": "cpu",
                            "samples_per_s": total * share,
                            "peak_allocated_bytes": 0,
                            "peak_reserved_bytes": 0,
                            "peak_rss_bytes": 0,
                        }
                        for rank, share in enumerate(RANK_SHARES)
                    ),
                )
                parallel.append(dataclasses.replace(event, summary=summary))
            case _:
                parallel.append(event)
    return parallel


@pytest.fixture(scope="module")
def parallel_events() -> list:
    events: list = []
    TrainingSession(SHORT.replace(max_steps=24), [events.append]).run()
    return as_data_parallel(events)


def record(path: Path, events: list) -> int:
    recorder = RunRecorder(path)
    for event in events:
        recorder(event)
    recorder.close()
    assert recorder.problem is None and recorder.run_id is not None
    return recorder.run_id


def legend(view: StoredRunView) -> list[str]:
    return [label.text for _, label in view.memory_plot.legend.items]


def rank_curve(view: StoredRunView, name: str):
    return next(curve for curve in view.memory_plot.ranks.curves if curve.name() == name)


def test_a_recorded_data_parallel_run_shows_every_rank(parallel_events, open_view, tmp_path):
    path = tmp_path / "runs.sqlite3"
    run_id = record(path, parallel_events)
    view = open_view(path, run_id)
    with RunStore(path) as store:
        ranks, reports, row = store.rank_reports(run_id), store.reports(run_id), store.run(run_id)
    view.draw_now()
    assert row.world_size == 2 and len(ranks) == 2 * len(reports)
    assert legend(view) == [
        "rank 0 (cpu) RSS",
        "rank 0 (cpu) peak RSS",
        "rank 1 (cpu) RSS",
        "rank 1 (cpu) peak RSS",
        "system used",
        "system memory",
    ]
    assert list(view.memory_plot.ranks.data.column(0)) == [r.at - row.started_at for r in reports]  # the reports' times
    _, rss = rank_curve(view, "rank 1 (cpu) RSS").getData()
    assert list(rss) == [r.allocated_bytes for r in ranks if r.rank == 1]
    _, peak = rank_curve(view, "rank 1 (cpu) peak RSS").getData()
    assert list(peak) == [r.peak_allocated_bytes for r in ranks if r.rank == 1]
    summary = next(e for e in parallel_events if isinstance(e, RunFinished)).summary
    expected = " · ".join(f"{rank['samples_per_s']:,.0f}" for rank in summary.ranks) + " img/s"
    assert view.stats.rank_speed.text() == expected and not view.stats.rank_speed.isHidden()
    assert "cpu ×2" in view.header.text()
    box = view.breakdown_view.rank_box
    assert not box.isHidden() and [box.itemText(i) for i in range(box.count())] == ["rank 0 (cpu)", "rank 1 (cpu)"]
    zero = view.breakdown_view.last
    assert zero is not None and zero.rank == 0
    box.setCurrentIndex(1)
    assert view.breakdown_view.last.rank == 1 and view.breakdown_view.last.params_bytes == 2 * zero.params_bytes


def test_a_data_parallel_run_is_followed_rank_by_rank(parallel_events, open_view, qtbot, tmp_path):
    path = tmp_path / "runs.sqlite3"
    recorder = RunRecorder(path)
    reports = [i for i, e in enumerate(parallel_events) if isinstance(e, StepsReported)]
    half = reports[len(reports) // 2]
    try:
        for event in parallel_events[:half]:
            recorder(event)
        qtbot.waitUntil(lambda: recorder.run_id is not None, timeout=10_000)
        with RunStore(path) as store:
            qtbot.waitUntil(lambda: len(store.rank_reports(recorder.run_id)) > 0, timeout=10_000)
        view = open_view(path, recorder.run_id)
        assert view.following
        seen = len(view.memory_plot.ranks.data)
        assert seen > 0 and "rank 1 (cpu) RSS" in legend(view)
        last = [e for e in parallel_events[half:] if isinstance(e, StepsReported)][-1]
        for event in parallel_events[half:]:
            if isinstance(event, RunFinished):
                break
            recorder(event)
        expected = " · ".join(f"{r.samples_per_s:,.0f}" for r in last.ranks) + " img/s"
        qtbot.waitUntil(lambda: view.stats.rank_speed.text() == expected, timeout=10_000)  # polled, not reread
        with RunStore(path) as store:
            steps = [r.step for r in store.rank_reports(recorder.run_id) if r.rank == 0]
        # the plot takes the polled reports in as they come (under load after the speed line): wait for them all
        qtbot.waitUntil(lambda: len(view.memory_plot.ranks.data) >= len(steps), timeout=10_000)
        assert len(view.memory_plot.ranks.data) == len(steps) > seen  # each report once, none lost or doubled
        assert view.breakdown_view.rank_box.count() == 2
    finally:
        recorder.close()


def test_an_ordinary_recorded_run_shows_no_rank_ui(finished, open_view):
    view = open_view(*finished)
    assert view.memory_plot.ranks.curves == [] and "process RSS" in legend(view)
    assert view.stats.rank_speed.isHidden() and view.breakdown_view.rank_box.isHidden()


def test_a_recorded_checkpoint_reads_as_the_live_log_words_it(open_view, tmp_path):
    events: list = []
    TrainingSession(SHORT, [events.append]).run()
    end = next(i for i, event in enumerate(events) if isinstance(event, RunFinished))
    saved = CheckpointSaved(step=12, epoch=1, path=str(tmp_path / "step-12.pt"), size_bytes=2_000_000, reason="end")
    path = tmp_path / "runs.sqlite3"
    view = open_view(path, record(path, [*events[:end], saved, *events[end:]]))
    assert "checkpoint saved at step 12 (the run ended mid-epoch)" in event_text.checkpoint_saved(saved)
    assert event_text.checkpoint_saved(saved) in view.log.toPlainText()


@pytest.mark.parametrize("keys", ["Esc", "Ctrl+W"])
def test_a_run_window_closes_on_esc_and_ctrl_w(finished, open_view, qtbot, keys):
    from PySide6.QtGui import QKeySequence

    view = open_view(*finished)
    view.activateWindow()
    qtbot.waitUntil(view.isActiveWindow)
    combination = QKeySequence(keys)[0]
    qtbot.keyClick(view, combination.key(), combination.keyboardModifiers())
    qtbot.waitUntil(lambda: not view.isVisible())


def test_the_runs_tab_and_the_run_s_window_word_a_data_parallel_device_alike(
    parallel_events, open_view, tmp_path, qtbot
):
    """The Runs tab said 'cpu' where the run's own window said 'cpu x2': one wording in both."""
    from gpu_train_monitor.gui.history.table_model import KEYS

    path = tmp_path / "runs.sqlite3"
    run_id = record(path, parallel_events)
    view = open_view(path, run_id)
    panel = make_panel(qtbot, path)
    try:
        row = panel.proxy.visible_ids().index(run_id)
        shown = panel.proxy.index(row, KEYS.index("device")).data()
    finally:
        panel.stop()
    assert shown == "cpu ×2"
    assert shown in view.header.text()


def test_a_run_this_window_launched_is_controlled_from_its_own_window(parallel_events, open_view, tmp_path, qtbot):
    """A data-parallel run the window started (rank 0 is a process of its child): its window offers Stop and
    Pause, which reach the launched processes, not 'read-only here ... Ctrl+C in its terminal'; Clear cache only
    where there is a cache to clear (a GPU's), not for these CPU processes."""
    import socket
    import sqlite3
    import subprocess
    import sys
    import time

    import psutil
    from PySide6.QtCore import Qt

    path = tmp_path / "runs.sqlite3"
    run_id = record(path, parallel_events[:-1])  # still running: no RunFinished yet
    rank0 = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        db = sqlite3.connect(path)
        with db:
            db.execute(
                "UPDATE runs SET status = 'running', finished_at = NULL, pid = ?, pid_started_at = ?, host = ?, "
                "heartbeat_at = ? WHERE id = ?",
                (rank0.pid, psutil.Process(rank0.pid).create_time(), socket.gethostname(), time.time(), run_id),
            )
        db.close()
        view = open_view(path, run_id)
        assert view.row is not None and view.row.live
        assert "read-only here" in view.header.text() and not view.control_buttons["stop"].isVisible()

        asked: list[str] = []

        class Launcher:  # what the window's launcher offers
            def request_stop(self) -> None:
                asked.append("stop")

            def toggle_pause(self) -> None:
                asked.append("pause")

            def request_cache_clear(self) -> None:
                asked.append("clear")

        view.controlled_by(Launcher())
        assert "read-only here" not in view.header.text() and "Ctrl+C" not in view.header.text()
        assert "started by this window as 2 processes: stop or pause it here" in view.header.text()
        assert not view.control_buttons["clear"].isVisible()  # the CPU has no cache to clear
        for name in ("pause", "stop"):
            button = view.control_buttons[name]
            assert button.isVisible() and button.isEnabled()
            qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        assert asked == ["pause", "stop"]

        db = sqlite3.connect(path)  # the same run on GPUs: its cache can be cleared
        with db:
            db.execute("UPDATE runs SET device = 'cuda:0', heartbeat_at = ? WHERE id = ?", (time.time(), run_id))
        db.close()
        view.poll()
        assert "stop, pause or clear its cache here" in view.header.text()
        qtbot.mouseClick(view.control_buttons["clear"], Qt.MouseButton.LeftButton)
        assert view.control_buttons["clear"].isVisible() and asked[-1] == "clear"
    finally:
        rank0.kill()
        rank0.wait()
