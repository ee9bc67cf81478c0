"""The What if… tab (beside the memory breakdown): the form's settings with one change at a time, predicted."""

from __future__ import annotations

import re

from tests.support.gui_support import FAST

WHAT_IF_TIMEOUT_MS = 120_000  # ~10 predictions on a shared 2-core CPU


def cells(table, row: int) -> list[str]:
    return [table.item(row, column).text() for column in range(table.columnCount())]


def test_the_table_shows_each_change_its_bytes_and_the_batch_that_fits(qtbot, window):
    what_if = window.parts.what_if
    assert not what_if.task.busy  # nothing worked out while the tab is not shown
    window.parts.tabs.setCurrentWidget(window.parts.what_if)
    qtbot.waitUntil(lambda: what_if.result is not None, timeout=WHAT_IF_TIMEOUT_MS)  # the rows come first
    qtbot.waitUntil(lambda: any(row.fits_batch for row in what_if.result.rows), timeout=WHAT_IF_TIMEOUT_MS)
    qtbot.waitUntil(what_if.isEnabled, timeout=5_000)
    result, table = what_if.result, what_if.table
    rows = {cells(table, index)[0]: cells(table, index) for index in range(table.rowCount())}
    assert table.rowCount() == len(result.rows)
    assert {"bf16 autocast", "AdamW instead of SGD", "activation checkpointing", "half the batch (16)"} <= set(rows)
    assert rows["half the batch (16)"][2].startswith("saves ")
    assert rows["double the batch (64)"][2].startswith("costs ")
    assert rows["AdamW instead of SGD"][2].startswith("costs ")  # two moments instead of one momentum buffer
    assert rows["activation checkpointing"][2].startswith("saves ")
    checkpointing = next(row for row in result.rows if row.change == "activation_checkpointing")
    assert checkpointing.blocks and f"; less in {checkpointing.blocks[0][0]} " in rows["activation checkpointing"][2]
    assert re.fullmatch(r"[\d.]+ (kB|MB|GB), fits", rows["bf16 autocast"][1])
    train = window.parts.form.train_images(window.parts.form.config())  # the whole training set fits a CPU's memory
    assert rows["bf16 autocast"][3] == f"{train} (the whole training set)"
    assert what_if.heading.text().startswith("As set: peak 22.66 MB of ")
    assert what_if.heading.text().endswith(f", fits; the largest batch that fits: {train} (the whole training set).")


def test_a_run_stops_the_table_and_it_is_worked_out_after(qtbot, window):
    window.parts.tabs.setCurrentWidget(window.parts.what_if)
    assert window.parts.what_if.task.busy  # asked for: the settings are shown
    with qtbot.waitSignal(window.run_ended, timeout=60_000):
        window.start_run(FAST)
        assert window.parts.what_if.heading.text() == "What if: worked out after the run"
    qtbot.waitUntil(lambda: window.parts.what_if.result is not None, timeout=WHAT_IF_TIMEOUT_MS)
