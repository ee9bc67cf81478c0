"""The Runs tab on a store of real recorded runs: its columns, search, sorting, and the edits people make
afterwards (rename, note, delete), each persisted in the store; store problems shown, never raised."""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from pathlib import Path

import psutil
import pytest
from PySide6.QtCore import QCoreApplication, QPoint, Qt, QTranslator
from PySide6.QtWidgets import QInputDialog, QMessageBox

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.gui.history.table_model import KEYS
from gpu_train_monitor.gui.qt.locale_format import date_time, number
from gpu_train_monitor.store.run_store import RunStore
from tests.support.run_store_support import SHORT, copy_store, make_panel, record_run, table_texts


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, list[int]]:
    """Three finished runs (batch 32, 64 and 16), recorded once for the module."""
    path = tmp_path_factory.mktemp("history") / "runs.sqlite3"
    ids = [record_run(path, SHORT.replace(batch_size=batch)) for batch in (32, 64, 16)]
    return path, ids


@pytest.fixture
def store_path(recorded, tmp_path) -> Path:
    """A copy of the recorded store for one test to change."""
    return copy_store(recorded[0], tmp_path / "runs.sqlite3")


@pytest.fixture
def panel(qtbot, store_path):
    panel = make_panel(qtbot, store_path)
    yield panel
    panel.stop()


def set_column(path: Path, run_id: int, **values: object) -> None:
    """Change a run's row behind the panel's back (another process would)."""
    db = sqlite3.connect(path)
    with db:
        for column, value in values.items():
            db.execute(f"UPDATE runs SET {column} = ? WHERE id = ?", (value, run_id))
    db.close()


def make_live(path: Path, run_id: int) -> None:
    """Mark a run as recorded by this very process, still running: it is live."""
    me = psutil.Process(os.getpid())
    set_column(
        path,
        run_id,
        status="running",
        finished_at=None,
        pid=me.pid,
        pid_started_at=me.create_time(),
        host=socket.gethostname(),
    )


def test_the_list_shows_every_recorded_run_with_its_columns(panel, recorded):
    _, ids = recorded
    assert sorted(panel.proxy.visible_ids()) == ids
    assert panel.proxy.visible_ids() == sorted(ids, reverse=True)  # newest first
    with RunStore(panel.link.path) as store:
        row = store.run(ids[1])
    line = {key: panel.proxy.index(panel.proxy.visible_ids().index(ids[1]), i).data() for i, key in enumerate(KEYS)}
    assert line["run"] == f"#{ids[1]}"
    assert (line["model"], line["dataset"], line["device"], line["status"]) == (
        "tiny-cnn",
        "synthetic",
        "cpu",
        "completed",
    )
    assert line["steps"] == "12"
    assert line["speed"] == number(row.samples_per_s, 0) + " images/s"  # the locale's digits, the run's unit
    assert line["loss"] == f"{row.loss_last:.4g}"
    assert line["peak"] == format_bytes(row.peak_allocated_bytes)
    assert line["when"] == date_time(row.started_at)  # the locale's short date and time
    assert "3 runs" in panel.info.text() and str(panel.link.path) in panel.info.text()


def test_search_filters_as_typed(panel, recorded, qtbot):
    _, ids = recorded
    assert panel.edits.rename(ids[0], "baseline")
    qtbot.keyClicks(panel.search, "base")
    assert panel.proxy.visible_ids() == [ids[0]]
    assert "1 of 3 runs" in panel.info.text()
    panel.search.setText(f"#{ids[2]}")
    assert panel.proxy.visible_ids() == [ids[2]]
    panel.search.setText("tiny-cnn completed")  # every word, each in some field
    assert len(panel.proxy.visible_ids()) == 3
    panel.search.setText("resnet")
    assert panel.proxy.visible_ids() == []
    panel.search.clear()
    assert len(panel.proxy.visible_ids()) == 3


def test_the_search_box_and_runs_list_search_find_the_same_runs(panel, recorded):
    """One rule (gpu_train_monitor.store.search) for the window and `runs list --search`: every word, literal
    characters."""
    _, ids = recorded
    assert panel.edits.rename(ids[1], "lr_0.1 100%")
    with RunStore(panel.link.path) as store:
        for search in (
            "%",
            "_",
            "lr_0.1",
            "100%",
            "LR_0.1 completed",
            "tiny-cnn lr_0.1",
            "lr 0.1",
            f"#{ids[2]}",
            "cpu COMPLETED",
        ):
            panel.search.setText(search)
            assert sorted(panel.proxy.visible_ids()) == sorted(row.id for row in store.list_runs(search)), search
    panel.search.setText("%")
    assert panel.proxy.visible_ids() == [ids[1]]  # the one run whose name holds a %
    panel.search.setText("tiny-cnn lr_0.1")
    assert panel.proxy.visible_ids() == [ids[1]]


def test_sorting_by_images_per_second_is_numeric(panel, store_path, recorded, qtbot):
    _, ids = recorded
    for run_id, speed in zip(ids, (950.0, 10_000.0, 85.5)):  # as text: "10000" < "85" < "950"
        set_column(store_path, run_id, samples_per_s=speed)
    panel.refresh()
    header = panel.table.horizontalHeader()
    column = KEYS.index("speed")
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))
    first = table_texts(panel, "speed")
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))
    second = table_texts(panel, "speed")
    ascending = [f"{number(value, 0)} images/s" for value in (85.5, 950.0, 10_000.0)]  # rounded to whole images
    assert sorted([first, second]) == sorted([ascending, ascending[::-1]])


def test_a_run_that_counted_no_samples_shows_no_speed(panel, store_path, recorded):
    _, ids = recorded
    set_column(store_path, ids[0], samples_per_s=0.0)  # a watched loop whose step() was given no samples
    panel.refresh()
    assert "–" in table_texts(panel, "speed") and number(0.0, 0) not in table_texts(panel, "speed")


def test_the_selection_and_new_runs_survive_a_refresh(panel, store_path, recorded):
    _, ids = recorded
    panel.select(ids[1])
    set_column(store_path, ids[1], note="changed elsewhere")
    set_column(store_path, ids[0], samples_per_s=1e9)
    panel.refresh()
    assert panel.selected_ids() == [ids[1]]
    assert table_texts(panel, "note")[panel.proxy.visible_ids().index(ids[1])] == "changed elsewhere"
    with RunStore(store_path) as store:
        store.delete(ids[2])
    panel.refresh()
    assert sorted(panel.proxy.visible_ids()) == ids[:2] and panel.selected_ids() == [ids[1]]


def test_rename_and_note_are_kept_in_the_store(panel, store_path, recorded, monkeypatch):
    _, ids = recorded
    panel.select(ids[0])
    monkeypatch.setattr(QInputDialog, "getText", lambda *args, **kwargs: ("baseline", True))
    monkeypatch.setattr(QInputDialog, "getMultiLineText", lambda *args, **kwargs: ("lr 0.03, no warm-up", True))
    panel.rename_action.trigger()
    panel.note_action.trigger()
    with RunStore(store_path) as store:
        row = store.run(ids[0])
    assert (row.name, row.note) == ("baseline", "lr 0.03, no warm-up")
    position = panel.proxy.visible_ids().index(ids[0])
    assert table_texts(panel, "run")[position] == f"#{ids[0]} baseline"
    assert table_texts(panel, "note")[position] == "lr 0.03, no warm-up"


def test_delete_asks_naming_the_run_and_removes_it(panel, store_path, recorded, monkeypatch):
    _, ids = recorded
    questions: list[str] = []
    answers = iter([QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Yes])

    def question(_parent, _title, text, *_args):
        questions.append(text)
        return next(answers)

    monkeypatch.setattr(QMessageBox, "question", question)
    panel.select(ids[2])
    panel.delete_action.trigger()  # cancelled: nothing happens
    assert ids[2] in panel.proxy.visible_ids()
    panel.delete_action.trigger()
    assert f"#{ids[2]}" in questions[0] and "tiny-cnn" in questions[0] and "cannot be undone" in questions[0]
    assert ids[2] not in panel.proxy.visible_ids()
    with RunStore(store_path) as store:
        assert [row.id for row in store.list_runs()] == ids[1::-1]
        assert store.steps(ids[2]).steps == ()


def test_a_live_run_cannot_be_deleted(panel, store_path, recorded, monkeypatch):
    _, ids = recorded
    make_live(store_path, ids[0])
    panel.refresh()
    assert table_texts(panel, "status")[panel.proxy.visible_ids().index(ids[0])] == "live (this window)"
    panel.select(ids[0])
    assert not panel.delete_action.isEnabled()
    assert "live" in panel.delete_action.toolTip()
    monkeypatch.setattr(QMessageBox, "question", lambda *args: pytest.fail("a live run must not be offered"))
    assert not panel.edits.delete(ids[0])
    assert "is live" in panel.info.text()
    panel.refresh()  # the refresh a second later keeps the reason on screen
    assert "is live" in panel.info.text()
    with RunStore(store_path) as store:
        assert store.run(ids[0]).status == "running"


def test_a_run_whose_process_died_is_shown_interrupted_at_the_next_refresh(panel, store_path, recorded):
    _, ids = recorded
    make_live(store_path, ids[1])
    # the pid now belongs to another process, and the heartbeat stopped a minute ago: it died
    set_column(store_path, ids[1], pid_started_at=0.0, heartbeat_at=time.time() - 60)
    panel.refresh()
    assert table_texts(panel, "status")[panel.proxy.visible_ids().index(ids[1])] == "interrupted"
    with RunStore(store_path) as store:
        row = store.run(ids[1])
    assert row.status == "interrupted" and "ended without finishing" in row.message


def test_store_problems_are_shown_in_the_panel(qtbot, tmp_path):
    missing = make_panel(qtbot, tmp_path / "none" / "runs.sqlite3")
    try:
        assert "No runs recorded yet" in missing.info.text()
        assert not (tmp_path / "none").exists()  # looking does not create a store
    finally:
        missing.stop()
    damaged_path = tmp_path / "damaged.sqlite3"
    damaged_path.write_bytes(b"this is not a database" * 100)
    damaged = make_panel(qtbot, damaged_path)
    try:
        assert "damaged" in damaged.info.text()
        assert damaged.proxy.rowCount() == 0
        damaged.refresh()  # tried again every second: still a line, no exception
        assert "damaged" in damaged.info.text()
    finally:
        damaged.stop()


def test_export_writes_the_run_where_asked(panel, recorded, tmp_path, qtbot):
    _, ids = recorded
    exporter = panel.edits.exporter
    with qtbot.waitSignal(exporter.exported, timeout=60_000) as exported:
        assert panel.edits.export(ids[0], "json", tmp_path / "out" / "run.json")
    assert exported.args[0].written == (tmp_path / "out" / "run.json",)
    assert (tmp_path / "out" / "run.json").stat().st_size > 0
    assert f"exported run {ids[0]} to {tmp_path / 'out'}: run.json" in panel.info.text()
    qtbot.waitUntil(lambda: not exporter.running)
    (tmp_path / "a-file.txt").write_text("x")
    with qtbot.waitSignal(exporter.failed, timeout=60_000):
        assert panel.edits.export(ids[0], "csv", tmp_path / "a-file.txt")  # a file where a folder must go
    assert "export failed" in panel.info.text() and "must be a folder" in panel.info.text()


def test_a_store_replaced_behind_the_window_is_read_afresh(panel, store_path, tmp_path, recorded):
    """A store moved aside and another put in its place (a restored backup): the panel reads the new file,
    not the one its old connection still holds."""
    _, ids = recorded
    assert sorted(panel.proxy.visible_ids()) == sorted(ids)
    other = copy_store(recorded[0], tmp_path / "other.sqlite3")
    with RunStore(other) as store:
        store.delete(ids[0])
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for suffix in ("-wal", "-shm"):
        Path(f"{store_path}{suffix}").unlink(missing_ok=True)
    os.replace(other, store_path)
    panel.refresh()
    assert sorted(panel.proxy.visible_ids()) == sorted(ids[1:])


def test_an_out_of_memory_run_says_so_and_is_found_by_either_word(panel, store_path, recorded):
    _, ids = recorded
    set_column(store_path, ids[1], status="oom", message="out of memory at step 3 with batch 64")
    panel.refresh()
    position = panel.proxy.visible_ids().index(ids[1])
    assert table_texts(panel, "status")[position] == "out of memory"
    status = panel.proxy.index(position, KEYS.index("status"))
    assert status.data(Qt.ItemDataRole.ToolTipRole) == "out of memory at step 3 with batch 64"  # as the store has it
    for search in ("oom", "out of memory"):  # the store's and the CLI's word, and the window's
        panel.search.setText(search)
        assert panel.proxy.visible_ids() == [ids[1]]


class TableTranslator(QTranslator):
    """Qt's translator reading from a table of (context, English) -> translation, as a compiled catalogue
    does: a text missing from the table stays English."""

    def __init__(self, table: dict[tuple[str, str], str]) -> None:
        super().__init__()
        self.table = table

    def translate(self, context, source, disambiguation=None, n=-1):  # noqa: ARG002
        return self.table.get((context, source))

    def isEmpty(self) -> bool:  # noqa: N802
        return False


@pytest.fixture
def in_chinese(qapp):
    """A few of the tab's texts in Chinese (in the contexts the code translates them in)."""
    translator = TableTranslator(
        {
            ("run_history", "Status"): "状态",
            ("run_history", "Steps"): "步数",
            (
                "run_history",
                "Highest allocated memory (on the CPU: process RSS)",
            ): "已分配显存的最高值（在 CPU 上：进程 RSS）",
            ("status_text", "completed"): "已完成",
            ("run_row_text", "live (this window)"): "训练中（本窗口）",
            ("HistoryPanel", "Search runs: name, note, model, dataset, device, status or #id"): "搜索运行",
            ("HistoryPanel", "{total} runs"): "{total} 个运行",
            ("HistoryPanel", "{live} live"): "{live} 个训练中",
            ("HistoryPanel", ", "): "，",
            ("HistoryPanel", "{counts} — {path}"): "{counts} — {path}",
            ("RunEdits", "Delete…"): "删除…",
            ("run_edits", "JSON document…"): "JSON 文档…",
            (
                "run_edits",
                "run {run} is live: stop it where it runs before deleting it",
            ): "运行 {run} 正在训练：请先停止它",
            ("RunHistoryModel", "started {time}, {duration} long"): "开始于 {time}，历时 {duration}",
        }
    )
    QCoreApplication.installTranslator(translator)
    yield
    QCoreApplication.removeTranslator(translator)


def test_the_tab_speaks_the_users_language(in_chinese, qtbot, store_path, recorded):
    _, ids = recorded
    make_live(store_path, ids[0])
    panel = make_panel(qtbot, store_path)  # built with the translator installed, as the window is
    try:
        header = panel.table.horizontalHeader().model()
        assert header.headerData(KEYS.index("status"), Qt.Orientation.Horizontal) == "状态"
        assert header.headerData(KEYS.index("steps"), Qt.Orientation.Horizontal) == "步数"
        assert (
            header.headerData(KEYS.index("peak"), Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
            == "已分配显存的最高值（在 CPU 上：进程 RSS）"
        )
        assert header.headerData(KEYS.index("note"), Qt.Orientation.Horizontal) == "Note"  # not in the table
        assert panel.search.placeholderText() == "搜索运行"
        assert panel.delete_action.text() == "删除…"
        assert [action.text() for action in panel.edits.export_menu.actions()][0] == "JSON 文档…"
        statuses = dict(zip(panel.proxy.visible_ids(), table_texts(panel, "status")))
        assert statuses == {ids[0]: "训练中（本窗口）", ids[1]: "已完成", ids[2]: "已完成"}
        assert panel.info.text() == f"3 个运行，1 个训练中 — {store_path}"
        panel.search.setText("已完成")  # the words people see find the runs, and so do the store's
        assert sorted(panel.proxy.visible_ids()) == ids[1:]
        panel.search.setText("completed")
        assert sorted(panel.proxy.visible_ids()) == ids[1:]
        panel.search.clear()
        panel.select(ids[0])
        assert panel.delete_action.toolTip() == f"运行 #{ids[0]} 正在训练：请先停止它"
        when = panel.proxy.index(panel.proxy.visible_ids().index(ids[1]), KEYS.index("when"))
        assert when.data(Qt.ItemDataRole.ToolTipRole).startswith("开始于 ") and "，历时 " in when.data(
            Qt.ItemDataRole.ToolTipRole
        )
    finally:
        panel.stop()
