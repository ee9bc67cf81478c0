"""The Runs tab and a run's own window say the same things the same way: the images/s (the median of the run's
reports, the first left out as warm-up) while it trains and after it was interrupted, the moment it started (the
table, the window's header and its log write dates and times alike), one process as one process, and the memory
breakdown's tab as the main window names it for that device."""

from __future__ import annotations

import os
import socket
import sqlite3
from pathlib import Path

import psutil
import pytest
from PySide6.QtCore import QLocale

from gpu_train_monitor.gui.history.feed import StoreLink
from gpu_train_monitor.gui.history.run_window import StoredRunView
from gpu_train_monitor.gui.history.run_window_text import where_text
from gpu_train_monitor.gui.views.stats_panel import median_rate
from tests.support.run_rows import run_row
from tests.support.run_store_support import SHORT, copy_store, make_panel, record_run, table_texts


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("agree") / "runs.sqlite3"
    return path, record_run(path, SHORT)


@pytest.fixture
def store_path(recorded, tmp_path) -> Path:
    return copy_store(recorded[0], tmp_path / "runs.sqlite3")


@pytest.fixture
def open_view(qtbot):
    made: list[tuple[StoredRunView, StoreLink]] = []

    def make(path: Path, run_id: int) -> StoredRunView:
        link = StoreLink(path)
        view = StoredRunView(link, run_id)
        qtbot.addWidget(view)
        view.show()
        made.append((view, link))
        qtbot.waitUntil(lambda: not view.loading, timeout=10_000)
        return view

    yield make
    for view, link in made:
        view.close()
        link.close()


def uneven_reports(path: Path, run_id: int, **run: object) -> float:
    """The run's reports given rates whose median is far from the last one's (as a run that slowed down at its
    end), the run's row as `run` says (the store keeps the latest report's rate until a summary); the median."""
    db = sqlite3.connect(path)
    with db:
        steps = [row[0] for row in db.execute("SELECT step FROM reports WHERE run_id = ? ORDER BY step", (run_id,))]
        rates = [5_000.0, *(100.0 + 10 * i for i in range(len(steps) - 2)), 9.0]  # warm-up, steady, slow last
        for step, rate in zip(steps, rates):
            db.execute("UPDATE reports SET samples_per_s = ? WHERE run_id = ? AND step = ?", (rate, run_id, step))
        values = {"samples_per_s": rates[-1], "summary": None, **run}
        for column, value in values.items():
            db.execute(f"UPDATE runs SET {column} = ? WHERE id = ?", (value, run_id))
    db.close()
    assert len(steps) >= 3
    return median_rate(rates)


def shown_speeds(qtbot, path: Path, run_id: int, view: StoredRunView) -> tuple[str, str]:
    panel = make_panel(qtbot, path)
    try:
        table = dict(zip(panel.proxy.visible_ids(), table_texts(panel, "speed")))[run_id]
    finally:
        panel.stop()
    return table, view.stats.values["speed"].text()


def test_a_live_run_shows_the_same_images_per_second_in_the_table_and_its_window(
    qtbot, store_path, recorded, open_view
):
    run_id = recorded[1]
    me = psutil.Process(os.getpid())
    median = uneven_reports(
        store_path,
        run_id,
        status="running",
        finished_at=None,
        pid=me.pid,
        pid_started_at=me.create_time(),
        host=socket.gethostname(),
    )
    view = open_view(store_path, run_id)
    assert view.row is not None and view.row.live
    table, window = shown_speeds(qtbot, store_path, run_id, view)
    assert table == f"{window} images/s" == f"{median:,.0f} images/s"  # the median, not the last report's 9


def test_an_interrupted_run_shows_its_reports_median_in_both(qtbot, store_path, recorded, open_view):
    run_id = recorded[1]
    median = uneven_reports(store_path, run_id, status="interrupted", message="killed")
    view = open_view(store_path, run_id)
    table, window = shown_speeds(qtbot, store_path, run_id, view)
    assert table == f"{window} images/s" == f"{median:,.0f} images/s"


def test_the_table_the_run_window_and_its_log_write_a_moment_alike(qtbot, recorded, open_view):
    QLocale.setDefault(QLocale("en_US"))  # whose short format would say 10:50 PM in one place, 22:50:46 in another
    path, run_id = recorded
    view = open_view(path, run_id)
    panel = make_panel(qtbot, path)
    try:
        when = dict(zip(panel.proxy.visible_ids(), table_texts(panel, "when")))[run_id]
    finally:
        panel.stop()
    header = view.header.text()
    first_log_time = view.log.lines()[0].split()[0]  # the time column of the run's first line: its start
    assert when.endswith(" " + first_log_time[:5])  # the table's time of day is the log's, to the minute
    assert f"started {when}{first_log_time[5:]}," in header  # the window's header: the table's, to the log's second


def test_a_run_the_window_started_as_one_process_says_so():
    row = run_row(live=True, world_size=1, device="cuda:0")
    text = where_text(row, launched=True)
    assert "1 processes" not in text
    assert text.startswith("started by this window: stop, pause or clear its cache here")
    assert where_text(run_row(live=True, world_size=2, device="cpu"), launched=True).startswith(
        "started by this window as 2 processes: stop or pause it here"  # no cache on the CPU to clear
    )


def test_a_cpu_runs_breakdown_tab_is_named_as_the_main_window_names_it(chinese, qtbot, recorded, open_view):
    from gpu_train_monitor.gui.views.breakdown_view import BreakdownView

    path, run_id = recorded  # a CPU run: its memory is the process's, 内存 rather than a GPU's 显存
    view = open_view(path, run_id)
    main_window_tab = BreakdownView()
    qtbot.addWidget(main_window_tab)
    main_window_tab.set_device_kind("cpu")
    shown = view.tabs.tabText(view.tabs.indexOf(view.breakdown_view))
    assert shown == main_window_tab.tab_title() and "显存" not in shown
