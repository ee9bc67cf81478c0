"""The main window's parts, built and wired to each other and to the window's slots: the settings form, the run
buttons, the live view, the device watch, run control, memory insight, the comparison, the Runs tab, a
data-parallel run's following, the tabs, the menus and the status bar.

Apart from `gpu_train_monitor.gui.window.main_window` so that the window's module reads as what it does with its parts
(start runs, follow their events, decide what each control may do, close); where the parts go is
`gpu_train_monitor.gui.window.layout`'s. The tab titles keep the window's translation context ("MainWindow").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QTabWidget

from gpu_train_monitor.gui.compare.menu import CompareMenu
from gpu_train_monitor.gui.compare.mode import CompareMode
from gpu_train_monitor.gui.form.estimate import RunEstimates
from gpu_train_monitor.gui.form.peak_prediction import PeakPrediction
from gpu_train_monitor.gui.form.settings_form import SettingsForm
from gpu_train_monitor.gui.history.panel import HistoryPanel
from gpu_train_monitor.gui.memory.device_watch import DeviceWatch
from gpu_train_monitor.gui.memory.insight import MemoryInsight
from gpu_train_monitor.gui.remote.connection import RECONNECTING, RemoteConnection
from gpu_train_monitor.gui.run.buttons import RunButtons
from gpu_train_monitor.gui.run.checkpoint_resume import CheckpointResume
from gpu_train_monitor.gui.run.launched_run import LaunchedRun
from gpu_train_monitor.gui.views.run_view import RunView
from gpu_train_monitor.gui.views.what_if_table import WhatIfTable
from gpu_train_monitor.gui.window import layout as window_layout
from gpu_train_monitor.gui.window.menu_bar import MenuBar
from gpu_train_monitor.gui.window.plot_tabs import PlotTabs
from gpu_train_monitor.gui.window.remote_machine import RemoteMachineControls
from gpu_train_monitor.gui.window.retranslate import keep_window_texts
from gpu_train_monitor.gui.window.run_control import RunControl

if TYPE_CHECKING:  # the window imports this module
    from gpu_train_monitor.gui.window.main_window import MainWindow


def build_parts(window: MainWindow) -> None:
    """Make `window`'s parts, as its attributes (`window.form`, `window.log`, ...), connect them and place them."""
    window.form = SettingsForm()
    window.form.validity_changed.connect(window._on_validity_changed)  # also when the device changed

    window.buttons = RunButtons()
    window.start_button, window.pause_button = window.buttons.start_button, window.buttons.pause_button
    window.stop_button, window.clear_button = window.buttons.stop_button, window.buttons.clear_button
    window.buttons.start_action.triggered.connect(window._on_start)  # the Run menu's items, the buttons' clicks

    window.view = view = RunView(window)
    window.loss_plot, window.memory_plot, window.stats = view.loss_plot, view.memory_plot, view.stats
    window.log, window.breakdown_view = view.log, view.breakdown_view
    window.connection = RemoteConnection(window)  # the machine connected to, if any (File ▸ Connect to a machine…)
    window.device_watch = DeviceWatch(
        window.form, window.view, window.controller, window._on_probe, window, connection=window.connection
    )
    window.form.refresh_devices_button.clicked.connect(window.device_watch.refresh_devices)
    window.device_status, window.idle_timer = window.device_watch.label, window.device_watch.timer
    window.run_control = RunControl(window.controller, window.stats, window.log, window.device_watch, window)
    window.run_control.changed.connect(window._update_controls)
    window.state_status = window.run_control.label
    window.buttons.pause_action.triggered.connect(window.run_control.pause_or_resume)
    window.buttons.stop_action.triggered.connect(window.run_control.stop)
    window.buttons.clear_action.triggered.connect(window.run_control.clear_cache)
    window.tabs = QTabWidget()
    window.insight = MemoryInsight(
        window.form, window.log, window.controller, window.tabs, lambda: window.view.last_sample, window
    )
    window.insight.controls_changed.connect(window._on_controls_changed)
    window.insight.start_requested.connect(window._on_start)
    window.record_history = window.insight.record_history
    window.save_snapshot_button = window.insight.save_snapshot_button
    window.nvml_panel, window.finder_panel = window.insight.nvml_panel, window.insight.finder_panel
    window.oom_banner = window.insight.oom_banner
    window.compare = CompareMode(window.view, window.log, window)
    window.compare_view, window.compare_button = window.compare.view, window.buttons.compare_button
    window.compare_menu = CompareMenu(window.compare_button, window.form, window.start_comparison, window.log, window)
    window.estimates = RunEstimates(window.settings, lambda spec: window.form.devices.identity(spec))  # a plain call
    capacity = lambda: window.probe and window.probe.sample().capacity_bytes  # noqa: E731 - the selected device's
    window.peak = PeakPrediction(window.form, window.form.peak_label, capacity, window)  # beside the batch size
    window.what_if = WhatIfTable(window.form, capacity)  # a tab of its own beside the breakdown: rows need height

    # recorded runs (this window's and those started elsewhere): opened in windows, overlaid on the plots
    window.history = HistoryPanel(window.controller.store_path, window.loss_plot, window.memory_plot)
    window.history.message.connect(lambda text: window.statusBar().showMessage(text, 8000))
    window.launched = LaunchedRun(
        window.controller.launcher,
        window.log,
        window.history,
        window.tabs,
        lambda: window.state,
        window.run_control.set,
        window._on_launched_run_ended,
        window,
        view=window.view,
    )
    if window.launched.feed is not None:  # its out of memory offers the banner once its processes are gone
        window.launched.feed.out_of_memory.connect(
            lambda event: window.insight.out_of_memory(event, retry=not window.launched.script)
        )
    window_layout.add_tabs(
        window.tabs,
        [
            (window.log, QCoreApplication.translate("MainWindow", "Log")),
            (window.history, QCoreApplication.translate("MainWindow", "Runs")),
            (window.breakdown_view, window.breakdown_view.tab_title()),
            (window.what_if, QCoreApplication.translate("MainWindow", "What if…")),
            (window.nvml_panel, QCoreApplication.translate("MainWindow", "GPU (NVML)")),
            (window.finder_panel, QCoreApplication.translate("MainWindow", "Batch-size finder")),
        ],
    )
    window.plot_tabs = PlotTabs(window.loss_plot, window.compare_view)
    window.right_splitter = window_layout.plot_splitter(window.plot_tabs, window.memory_plot, window.tabs)
    left = window_layout.settings_column(window.form, window.buttons, window.insight.snapshot_controls, window.stats)
    window.main_splitter = window_layout.main_splitter(left, window.oom_banner, window.right_splitter)
    window.setCentralWidget(window.main_splitter)

    window.remote = RemoteMachineControls(
        window.connection, window.form, window.log, window.settings, window, window.nvml_panel
    )
    window.connection.state_changed.connect(  # a run window of that machine's run says "reconnecting" meanwhile
        lambda state: window.history.connection_dropped(window.connection.host if state == RECONNECTING else None)
    )
    window.statusBar().addWidget(window.device_status, 1)
    window.finder_panel.machine_source = window.remote.machine  # a search runs where the form's device is
    window.statusBar().addPermanentWidget(window.remote.label)  # "gpu-box · 23 ms", shown while connected
    window.remote.label.show_state()  # adding it showed it
    window.statusBar().addPermanentWidget(window.state_status)
    notify, buttons = window.statusBar().showMessage, window.buttons
    run_actions = (buttons.start_action, buttons.pause_action, buttons.stop_action, buttons.clear_action)
    window.menus = MenuBar(
        run_actions=run_actions,
        compare_menu=window.compare_menu.menu,
        settings=window.settings,
        log=window.log,
        shown_plots=window.shown_plots,
        request_checkpoint=window.controller.request_checkpoint,
        torch_loaded=lambda: window.torch_loaded,
        notify=notify,
        watch_script=window.watch_script,
        parent=window,
    )
    window.setMenuBar(window.menus)
    window.menus.add_connection_actions(window.remote.connect_action, window.remote.disconnect_action)
    window.menus.remote_host = lambda: (machine := window.remote.watch_machine()) and machine.host
    window.resumer = CheckpointResume(
        window.form, window.log, window.controller.store_path, window.loss_plot, notify, window
    )
    window.resumer.resume_requested.connect(window._on_resume_requested)
    window.menus.add_file_actions(
        window.history.open_action,
        window.history.export_action,  # above Save plots
        window.resumer.action,
    )
    window.history.open_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Open))  # Ctrl+O
    window.history.resume_requested.connect(window.resumer.resume_file)  # a run's checkpoint, from the Runs tab
    window.resize(1280, 860)
    window.texts = keep_window_texts(window)  # menus, tabs and the form follow a language change
