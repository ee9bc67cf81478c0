"""Will it fit over batch x sequence length in the What if… tab: a text model's grid, worked out off the GUI thread,
each cell the predicted peak coloured by its verdict; an image model has none."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from PySide6.QtGui import QColor

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import predict
from gpu_train_monitor.gui.qt import palette
from gpu_train_monitor.gui.views.fit_grid_view import FitGridView

GPT = RunConfig(device="cpu", model="gpt-tiny", dataset="synthetic-text", seq_len=32, batch_size=4)
GRID_TIMEOUT_MS = 120_000  # nine predictions on a shared 2-core CPU


@pytest.fixture
def grid(qtbot) -> Iterator[FitGridView]:
    """A grid whose job is ended at teardown, passed or failed (a running QThread must not be destroyed)."""
    view = FitGridView()
    qtbot.addWidget(view)
    yield view
    assert view.shutdown(60_000)


def complete(grid: FitGridView) -> bool:
    return grid.result is not None and grid.result.complete and not grid.task.busy


def texts(grid: FitGridView) -> list[list[str]]:
    table = grid.table
    return [[table.item(r, c).text() for c in range(table.columnCount())] for r in range(table.rowCount())]


def test_the_grid_shows_each_batch_at_each_sequence_length_coloured_by_its_verdict(qtbot, grid) -> None:
    capacity = predict(GPT, 4).peak_bytes * 2  # the form's own cell fits; the largest does not
    grid.request(GPT, "cpu", capacity)
    assert not grid.isHidden()
    assert grid.heading.text() == "Batch × sequence length: predicting each cell…"
    qtbot.waitUntil(lambda: grid.result is not None, timeout=GRID_TIMEOUT_MS)  # the first cells, as they come
    if not grid.result.complete:
        assert "…" in [cell for row in texts(grid) for cell in row]
    qtbot.waitUntil(lambda: complete(grid), timeout=GRID_TIMEOUT_MS)
    result = grid.result
    assert result.batch_sizes == (2, 4, 8) and result.seq_lens == (16, 32, 64)
    table = grid.table
    assert [table.horizontalHeaderItem(c).text() for c in range(3)] == ["16 tokens", "32 tokens", "64 tokens"]
    assert [table.verticalHeaderItem(r).text() for r in range(3)] == ["batch 2", "batch 4", "batch 8"]
    shown = texts(grid)
    for r, batch in enumerate(result.batch_sizes):
        for c, seq_len in enumerate(result.seq_lens):
            cell = result.cell(batch, seq_len)
            assert re.fullmatch(r"[\d.]+ (kB|MB|GB), (fits|tight|does not fit)", shown[r][c])
            assert shown[r][c].endswith(cell.verdict)
            colour = {"fits": palette.GOOD, "tight": palette.WARNING, "does not fit": palette.ERROR}[cell.verdict]
            assert table.item(r, c).foreground().color() == QColor(colour)
    assert result.cell(4, 32).verdict == "fits" and result.cell(8, 64).verdict == "does not fit"
    assert table.verticalScrollBar().maximum() == 0  # every row in view
    grid.clear()
    assert grid.isHidden() and grid.result is None


def test_the_what_if_tab_shows_the_grid_for_a_text_model_only(qtbot, make_window) -> None:
    from tests.support.gui_support import FAST

    window = make_window(FAST.replace(model="gpt-tiny", dataset="synthetic-text", seq_len=32, batch_size=4))
    what_if = window.parts.what_if
    window.parts.tabs.setCurrentWidget(what_if)
    qtbot.waitUntil(lambda: complete(what_if.grid), timeout=GRID_TIMEOUT_MS)
    assert not what_if.grid.isHidden()
    assert what_if.grid.result.seq_lens == (16, 32, 64)
    qtbot.waitUntil(lambda: what_if.result is not None, timeout=GRID_TIMEOUT_MS)
    changes = [what_if.table.item(r, 0).text() for r in range(what_if.table.rowCount())]
    assert "half the sequence length (16)" in changes
    assert "activation checkpointing per transformer block (2 in all)" in changes
    text = window.parts.form.config()
    window.parts.form.set_config(text.replace(seq_len=64))  # a longer sequence: the grid again, around it
    qtbot.waitUntil(
        lambda: complete(what_if.grid) and what_if.grid.result.seq_lens == (32, 64, 128), timeout=GRID_TIMEOUT_MS
    )
    window.parts.form.set_config(FAST)  # an image model: no sequence length, no grid
    qtbot.waitUntil(what_if.grid.isHidden, timeout=5_000)
