"""The Runs tab in the window: the window's own run is listed live while it trains and as it ended after,
reopening it shows what the live plots showed, overlaying it lands on the live plots, and the File menu
opens runs."""

from __future__ import annotations

import numpy as np
import pytest

from gpu_train_monitor.gui.window.main_window import MainWindow
from tests.support.gui_support import ENDLESS
from tests.support.run_store_support import table_texts

RUN_TIMEOUT_MS = 60_000


@pytest.fixture
def window(qtbot, settings, tmp_path):
    window = MainWindow(settings, runs_db=str(tmp_path / "runs.sqlite3"))
    qtbot.addWidget(window)
    window.on_torch_ready()
    window.parts.form.set_config(ENDLESS)
    window.show()
    yield window
    if window.controller.running:
        window.controller.shutdown(30_000)


def test_the_windows_run_is_listed_live_then_reopened_and_overlaid(qtbot, window):
    history = window.parts.history
    assert window.parts.tabs.tabText(window.parts.tabs.indexOf(history)) == "Runs"
    assert history.link.path == window.controller.store_path
    window.parts.tabs.setCurrentWidget(history)
    window.parts.buttons.start_action.trigger()
    qtbot.waitUntil(lambda: table_texts(history, "status") == ["live (this window)"], timeout=RUN_TIMEOUT_MS)
    run_id = history.proxy.visible_ids()[0]
    qtbot.waitUntil(lambda: len(window.parts.view.loss_plot.data) >= 5, timeout=RUN_TIMEOUT_MS)
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS):
        window.parts.buttons.stop_action.trigger()
    qtbot.waitUntil(lambda: table_texts(history, "status") == ["stopped"], timeout=5_000)

    history.select(run_id)
    open_run = history.open_action
    assert open_run in window.parts.menus.file_menu.actions()  # File > Open run… opens the selected run
    open_run.trigger()
    view = history.views[run_id]
    qtbot.waitUntil(lambda: not view.loading, timeout=10_000)  # read in the background
    assert view.isVisible() and "stopped" in view.header.text()
    live = window.parts.view.loss_plot.data
    assert np.array_equal(view.loss_plot.data.column(1), live.column(1), equal_nan=True)  # as it was shown live
    assert list(view.loss_plot.data.column(0)) == list(live.column(0))

    history.set_overlay(run_id, True)
    qtbot.waitUntil(lambda: not history.feeds.loaders, timeout=10_000)
    legend = [label.text for _, label in window.parts.view.loss_plot.plot.getPlotItem().legend.items]
    assert legend[-1] == f"#{run_id} tiny-cnn cpu"

    window.parts.tabs.setCurrentWidget(window.parts.view.log)
    history.table.clearSelection()
    history.open_action.trigger()  # nothing selected: the list comes to the front to pick from
    assert window.parts.tabs.currentWidget() is history

    window.close()  # the opened run's window goes with the main window
    assert not view.isVisible() and not history.refresh_timer.isActive()
