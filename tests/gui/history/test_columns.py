"""The Runs table's columns fit what they hold, and the Note stays in view beside its run."""

from __future__ import annotations

from gpu_train_monitor.gui.history.columns import MAX_COLUMN_WIDTH
from gpu_train_monitor.gui.history.table_model import KEYS
from gpu_train_monitor.store.run_store import RunStore
from tests.support.run_store_support import make_panel, record_run

NAME = "[optimizer=adamw]"  # "#6 [optimize…" was cut at the fixed width


def test_columns_fit_their_contents_and_the_note_sits_beside_the_run(qtbot, tmp_path):
    path = tmp_path / "runs.sqlite3"
    run_id = record_run(path)
    with RunStore(path) as store:
        store.rename(run_id, NAME)
        store.annotate(run_id, "baseline")
    panel = make_panel(qtbot, path)
    try:
        panel.refresh()
        table, header = panel.table, panel.table.horizontalHeader()
        qtbot.waitUntil(lambda: header.sectionSize(KEYS.index("run")) >= table.sizeHintForColumn(KEYS.index("run")))
        metrics = table.fontMetrics()
        for key in ("run", "status", "when", "steps"):
            column = KEYS.index(key)
            text = table.model().index(0, column).data()
            assert header.sectionSize(column) >= metrics.horizontalAdvance(text), key  # not cut
            assert header.sectionSize(column) <= MAX_COLUMN_WIDTH
        note = KEYS.index("note")
        assert header.visualIndex(note) == header.visualIndex(KEYS.index("run")) + 1  # beside its run, in view
        assert header.sectionViewportPosition(note) + header.sectionSize(note) <= table.viewport().width()
    finally:
        panel.stop()
