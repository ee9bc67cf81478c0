"""The main window's parts, built and wired to each other and to the window's slots: the settings form, the run
buttons, the live view, the device watch, run control, memory insight, the comparison, the Runs tab, a
data-parallel run's following, the tabs, the menus and the status bar.

Apart from `gpu_train_monitor.gui.window.main_window` so that the window's module reads as what it does with its parts
(start runs, follow their events, decide what each control may do, close); where the parts go is
`gpu_train_monitor.gui.window.layout`'s. The tab titles keep the window's translation context ("MainWindow").

`build_parts` returns them as a `WindowParts`, which the window keeps as `window.parts`: a part is reached through
its owner (`window.parts.buttons.start_button`, `window.parts.view.log`, `window.parts.insight.nvml_panel`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QSplitter, QTabWidget

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
from gpu_train_monitor.gui.window.run_control import RunControl

if TYPE_CHECKING:  # the window imports this module
    from gpu_train_monitor.gui.window.main_window import MainWindow


@dataclass(eq=False)
class WindowParts:
    """What the window is made of: each owner of its widgets, built and wired by `build_parts`."""

    form: SettingsForm
    buttons: RunButtons  # Start, Pause, Stop, Clear cache, Compare, and the Run menu's actions
    view: RunView  # the loss and memory plots, the run's numbers, the log, the memory breakdown
    connection: RemoteConnection  # the machine connected to, if any (File ▸ Connect to a machine…)
    device_watch: DeviceWatch  # the selected device's probe and the status bar's device line
    run_control: RunControl  # the run's WindowState and the status bar's state label
    insight: MemoryInsight  # snapshots, NVML, the batch-size finder, the out-of-memory banner
    compare: CompareMode  # a comparison's race (its `view` is the Comparison tab)
    compare_menu: CompareMenu
    estimates: RunEstimates
    peak: PeakPrediction
    what_if: WhatIfTable
    history: HistoryPanel  # the Runs tab
    launched: LaunchedRun  # a data-parallel run's or a watched script's processes, followed
    tabs: QTabWidget  # below the plots: log, runs, breakdown, step time, what if, NVML, batch-size finder
    plot_tabs: PlotTabs
    main_splitter: QSplitter
    right_splitter: QSplitter
    remote: RemoteMachineControls
    menus: MenuBar
    resumer: CheckpointResume

    def splitters(self) -> dict[str, QSplitter]:
        """The splitters whose sizes are kept between launches, by their settings' names."""
        return {"main_splitter": self.main_splitter, "right_splitter": self.right_splitter}


def build_parts(window: MainWindow) -> WindowParts:
    """Make `window`'s parts, connect them to each other and to the window's slots, and place them."""
    form = SettingsForm()
    form.validity_changed.connect(window._on_validity_changed)  # also when the device changed

    buttons = RunButtons()
    buttons.start_action.triggered.connect(window._on_start)  # the Run menu's items, the buttons' clicks

    view = RunView(window)
    log = view.log
    connection = RemoteConnection(window)  # the machine connected to, if any (File ▸ Connect to a machine…)
    device_watch = DeviceWatch(form, view, window.controller, window._on_probe, window, connection=connection)
    form.refresh_devices_button.clicked.connect(device_watch.refresh_devices)
    run_control = RunControl(window.controller, view.stats, log, device_watch, window)
    run_control.changed.connect(window._update_controls)
    buttons.pause_action.triggered.connect(run_control.pause_or_resume)
    buttons.stop_action.triggered.connect(run_control.stop)
    buttons.clear_action.triggered.connect(run_control.clear_cache)
    tabs = QTabWidget()
    insight = MemoryInsight(form, log, window.controller, tabs, lambda: view.last_sample, window)
    insight.controls_changed.connect(window._on_controls_changed)
    insight.start_requested.connect(window._on_start)
    compare = CompareMode(view, log, window)
    compare_menu = CompareMenu(buttons.compare_button, form, window.start_comparison, log, window)
    estimates = RunEstimates(window.settings, lambda spec: form.devices.identity(spec))  # a plain call
    capacity = lambda: window.probe and window.probe.sample().capacity_bytes  # noqa: E731 - the selected device's
    peak = PeakPrediction(form, form.peak_label, capacity, window)  # beside the batch size
    what_if = WhatIfTable(form, capacity)  # a tab of its own beside the breakdown: rows need height

    # recorded runs (this window's and those started elsewhere): opened in windows, overlaid on the plots
    history = HistoryPanel(window.controller.store_path, view.loss_plot, view.memory_plot)
    history.message.connect(lambda text: window.statusBar().showMessage(text, 8000))
    launched = LaunchedRun(
        window.controller.launcher,
        log,
        history,
        tabs,
        lambda: window.state,
        run_control.set,
        window._on_launched_run_ended,
        window,
        view=view,
    )
    if launched.feed is not None:  # its out of memory offers the banner once its processes are gone
        launched.feed.out_of_memory.connect(lambda event: insight.out_of_memory(event, retry=not launched.script))
    window_layout.add_tabs(
        tabs,
        [
            (log, QCoreApplication.translate("MainWindow", "Log")),
            (history, QCoreApplication.translate("MainWindow", "Runs")),
            (view.breakdown_view, view.breakdown_view.tab_title()),
            (view.step_time, QCoreApplication.translate("MainWindow", "Step time")),
            (what_if, QCoreApplication.translate("MainWindow", "What if…")),
            (insight.nvml_panel, QCoreApplication.translate("MainWindow", "GPU (NVML)")),
            (insight.finder_panel, QCoreApplication.translate("MainWindow", "Batch-size finder")),
        ],
    )
    plot_tabs = PlotTabs(view.loss_plot, compare.view)
    right_splitter = window_layout.plot_splitter(plot_tabs, view.memory_plot, tabs)
    left = window_layout.settings_column(form, buttons, insight.snapshot_controls, view.stats)
    main_splitter = window_layout.main_splitter(left, insight.oom_banner, right_splitter)
    window.setCentralWidget(main_splitter)

    remote = RemoteMachineControls(connection, form, log, window.settings, window, insight.nvml_panel)
    connection.state_changed.connect(  # a run window of that machine's run says "reconnecting" meanwhile
        lambda state: history.connection_dropped(connection.host if state == RECONNECTING else None)
    )
    window.statusBar().addWidget(device_watch.label, 1)
    insight.finder_panel.machine_source = remote.machine  # a search runs where the form's device is
    window.statusBar().addPermanentWidget(remote.label)  # "gpu-box · 23 ms", shown while connected
    remote.label.show_state()  # adding it showed it
    window.statusBar().addPermanentWidget(run_control.label)
    notify = window.statusBar().showMessage
    run_actions = (buttons.start_action, buttons.pause_action, buttons.stop_action, buttons.clear_action)
    menus = MenuBar(
        run_actions=run_actions,
        compare_menu=compare_menu.menu,
        settings=window.settings,
        log=log,
        shown_plots=window.shown_plots,
        request_checkpoint=window.controller.request_checkpoint,
        torch_loaded=lambda: window.torch_loaded,
        notify=notify,
        watch_script=window.watch_script,
        parent=window,
    )
    window.setMenuBar(menus)
    menus.add_connection_actions(remote.connect_action, remote.disconnect_action)
    menus.remote_host = lambda: (machine := remote.watch_machine()) and machine.host
    resumer = CheckpointResume(form.set_config, log, window.controller.store_path, view.loss_plot, notify, window)
    resumer.resume_requested.connect(window._on_resume_requested)
    menus.add_file_actions(
        history.open_action,
        history.export_action,  # above Save plots
        resumer.action,
    )
    history.open_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Open))  # Ctrl+O
    history.resume_requested.connect(resumer.resume_file)  # a run's checkpoint, from the Runs tab
    window.resize(1280, 860)
    return WindowParts(
        form=form,
        buttons=buttons,
        view=view,
        connection=connection,
        device_watch=device_watch,
        run_control=run_control,
        insight=insight,
        compare=compare,
        compare_menu=compare_menu,
        estimates=estimates,
        peak=peak,
        what_if=what_if,
        history=history,
        launched=launched,
        tabs=tabs,
        plot_tabs=plot_tabs,
        main_splitter=main_splitter,
        right_splitter=right_splitter,
        remote=remote,
        menus=menus,
        resumer=resumer,
    )
