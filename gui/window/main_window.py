"""The main window: settings on the left, live loss and memory plots on the right, run control, log.

It owns no training logic: runs go through `RunController` (a QThread per run, or a data-parallel run's own
processes) and arrive back as core events in `_on_run_event`, which hands them to the parts that show them.
`gpu_train_monitor.gui.window.parts` builds the window's parts and wires them to each other
(`gpu_train_monitor.gui.window.layout` places them); the window decides what each control may do, by the run's
`WindowState` (`gpu_train_monitor.gui.window.run_control`) and the form's input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QSettings, Signal, Slot
from PySide6.QtGui import QCloseEvent, QIcon
from PySide6.QtWidgets import QMainWindow, QWidget

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.config.sequences import throughput
from gpu_train_monitor.events.events import OutOfMemory, RunFinished
from gpu_train_monitor.gui.compare.menu import start_error
from gpu_train_monitor.gui.compare.mode import COMPARISON_EVENTS
from gpu_train_monitor.gui.launch.watch_command import WatchRequest
from gpu_train_monitor.gui.qt.core_text import core_text, error_text
from gpu_train_monitor.gui.qt.resources import ICON, asset
from gpu_train_monitor.gui.run.controller import RunController
from gpu_train_monitor.gui.views.window_state import WindowState
from gpu_train_monitor.gui.window import settings as window_settings
from gpu_train_monitor.gui.window.parts import build_parts
from gpu_train_monitor.gui.window.retranslate import keep_window_texts
from gpu_train_monitor.gui.window.run_control import resolved_for_log

COMPARE_ONE_PROCESS = QT_TRANSLATE_NOOP(
    "MainWindow", "A comparison races runs of one process each: set the process count to 1"
)
CLOSE_WAIT_MS = 5000


class MainWindow(QMainWindow):
    """GPU Training Monitor's window."""

    run_ended = Signal(str)  # the final WindowState's name, after the run's thread is gone

    def __init__(self, settings: QSettings | None = None, runs_db: str | None = None, record: bool = True) -> None:
        """Runs are recorded in the run store at `runs_db` (None: the default store) unless `record` is False."""
        super().__init__()
        self.settings = settings if settings is not None else window_settings.user_settings()
        self.setWindowTitle(self.tr("GPU Training Monitor"))
        icon_path = asset(ICON)
        if icon_path.is_file():
            self.setWindowIcon(QIcon(str(icon_path)))
        self.controller = RunController(self, runs_db, record)
        self.controller.event.connect(self._on_run_event)
        self.controller.crashed.connect(self._on_run_crashed)
        self.controller.run_finished.connect(self._on_run_finished)
        self.torch_loaded = False
        self._close_pending = False
        self._run_config: RunConfig | None = None  # the single run's config as started
        self.parts = build_parts(self)  # the form, the plots, the tabs, the menus: self.parts.form, self.parts.view...
        self.texts = keep_window_texts(self, self.parts)  # menus, tabs and the form follow a language change
        log = self.parts.view.log
        window_settings.restore(
            self.settings, self, self.parts.form, self.parts.splitters(), lambda text: log.add(text, "warning")
        )

        app = QCoreApplication.instance()
        if app is not None:  # the app quitting without closing the window (app.exit) stops a run's processes too
            app.aboutToQuit.connect(self._on_about_to_quit)
        self._update_controls()

    def shown_plots(self) -> list[tuple[str, pg.PlotWidget]]:
        """(file-name part, plot) for each plot the window shows now (`PlotTabs.shown_plots`)."""
        return self.parts.plot_tabs.shown_plots(self.parts.view.memory_plot)

    @property
    def state(self) -> WindowState:
        """Where the run is now (`RunControl`)."""
        return self.parts.run_control.state

    # ---- torch arrives ---------------------------------------------------------------------------
    @Slot()
    def on_torch_ready(self) -> None:
        """Called once torch has been imported (in the background at launch): fill devices and models."""
        self.torch_loaded = True
        from gpu_train_monitor.model.models import available_models

        parts = self.parts
        parts.form.set_models(available_models())
        parts.device_watch.start()
        parts.insight.start()
        parts.peak.torch_ready()
        parts.what_if.torch_ready()
        self._update_controls()

    @property
    def probe(self) -> Any:
        """The selected device's `gpu_train_monitor.memory.probe.MemoryProbe` (None before torch loads, or for no usable
        device)."""
        return self.parts.device_watch.probe

    def _on_probe(self, probe: Any) -> None:
        self.parts.insight.probe = probe

    # ---- run control -----------------------------------------------------------------------------
    @Slot()
    def _on_start(self) -> None:
        # also reached from the out-of-memory banner's Retry: a batch-size search measures memory, so a run
        # waits for it (its trials reset the device's peak counters), and invalid input never starts
        form, log = self.parts.form, self.parts.view.log
        if self.controller.running or not self.torch_loaded or self.parts.insight.searching or not form.valid:
            return
        try:
            config = form.config()
        except Exception as exc:  # the form disables Start on invalid input; this is a last guard
            log.add(error_text(exc), "error")
            return
        try:
            self.start_run(config)
        except UserError as exc:  # a data-parallel run's processes could not be started
            log.add(error_text(exc), "error")

    def start_run(self, config: RunConfig, resume: str | None = None) -> None:
        """Start a run with `config` (Start, the screenshot mode) or continue the checkpoint `resume`; a
        checkpoint that cannot be resumed raises UserError before anything changes (events queue behind us)."""
        parts = self.parts
        machine = parts.remote.machine()  # the form's device may be another machine's
        self.controller.start(
            config,
            record_memory_history=parts.insight.record_history_requested and machine is None,
            resume=resume,
            machine=machine,
        )
        parts.view.reset(resolved_for_log(parts.form, config))
        parts.view.breakdown_view.predicted.expect(config)  # predicted when its first breakdown comes, beside it
        self._run_config = config
        self._starting(parts.view.loss_plot)
        if self.controller.data_parallel:
            parts.launched.started(config, parts.form.device_kind())
        self._update_controls()

    def watch_script(self, request: WatchRequest) -> str | None:
        """Start `request`'s script under the watch, followed live as a data-parallel run is (File ▸ Watch a
        script…); why it could not start (said in its dialog), else None."""
        if self.controller.running or self.parts.insight.searching:
            return self.tr("a run or a batch-size search is under way")
        try:
            self.controller.start_watch(request, self.parts.remote.watch_machine())
        except UserError as exc:
            return error_text(exc)
        self.parts.view.reset_watched()
        self._run_config = None
        self._starting(self.parts.view.loss_plot)
        self.parts.launched.watching(request)
        self._update_controls()
        return None

    @Slot(object, str)
    def _on_resume_requested(self, config: RunConfig, path: str) -> None:
        try:
            self.start_run(config, resume=path)
        except UserError as exc:  # a checkpoint that cannot be resumed: nothing has started
            self.parts.resumer.refuse(error_text(exc))

    def start_comparison(
        self, overrides: Sequence[Mapping[str, Any]], name: str, base: RunConfig | None = None
    ) -> str | None:
        """Race the form's settings (or `base`) with each of `overrides`; returns why it could not start
        (a plan the machine cannot run, the settings themselves), else None."""
        if self.controller.running or not self.torch_loaded or self.parts.insight.searching:
            return self.tr("a run or a batch-size search is under way")
        try:
            base = base or self.parts.form.config()
            if base.nproc > 1:
                return QCoreApplication.translate("MainWindow", COMPARE_ONE_PROCESS)
            comparison = self.controller.start_comparison(base, overrides, self.parts.remote.machine())
        except UserError as exc:
            return start_error(exc)
        self._run_config = None
        self.parts.compare.begin(comparison, name)
        self._starting(self.parts.compare.view)
        self._update_controls()
        return None

    def _starting(self, plot: QWidget) -> None:
        parts = self.parts
        parts.plot_tabs.setCurrentWidget(plot)  # a single run's loss plot, or a comparison's race
        parts.run_control.starting()
        parts.insight.run_starting()

    # ---- events from the run ---------------------------------------------------------------------
    @Slot(object)
    def _on_run_event(self, event: object) -> None:
        config, single, parts = self._run_config, True, self.parts
        if isinstance(event, COMPARISON_EVENTS):
            parts.run_control.follow(event, single=False)  # a comparison's end
            unwrapped = parts.compare.take(event)
            if unwrapped is None:
                return
            (event, config), single = unwrapped, False
        parts.view.show(event)
        if isinstance(event, RunFinished) and config is not None:
            parts.estimates.record(config, event)
            self._show_estimate()
        if isinstance(event, OutOfMemory) and single:  # a comparison's runs are not retried one by one
            parts.insight.out_of_memory(event)
        parts.run_control.follow(event, single)

    @Slot(str)
    def _on_run_crashed(self, message: str) -> None:
        self.parts.run_control.final = WindowState.FAILED
        self.parts.view.show_crash(message)

    @Slot()
    def _on_run_finished(self) -> None:
        """The run's thread is gone: back to ready."""
        parts = self.parts
        parts.compare.end()
        final = parts.run_control.settle()
        parts.insight.run_ended()
        parts.history.refresh()  # the recorder has written the run's end: the list says so now, not a second later
        self.run_ended.emit(final.value)
        if self._close_pending:
            self.close()

    def _on_launched_run_ended(self, state: WindowState) -> None:
        """A data-parallel run's processes are all gone: back to ready, as after a run's thread."""
        self.parts.run_control.final = state
        self._on_run_finished()

    # ---- controls --------------------------------------------------------------------------------
    @Slot(bool, str)
    def _on_validity_changed(self, valid: bool, message: str) -> None:
        self.parts.device_watch.show_device()  # set_config changes the device without the combo's own signal
        self._name_the_memory()
        self._name_the_speed(valid)
        self._update_controls()
        self._show_estimate()
        self.parts.peak.settings_changed()
        self.parts.what_if.settings_changed()

    def _name_the_memory(self) -> None:
        """The breakdown tab calls the memory what the selected device's is (the process's on the CPU)."""
        breakdown_view, tabs = self.parts.view.breakdown_view, self.parts.tabs
        breakdown_view.set_device_kind(self.parts.form.device_kind())
        tabs.setTabText(tabs.indexOf(breakdown_view), breakdown_view.tab_title())

    def _name_the_speed(self, valid: bool) -> None:
        """Before the first run the speed row is named in the unit the form's run would have (tokens/s for text);
        after a run it keeps that run's unit, whose figure it still shows."""
        if valid and self.state is WindowState.IDLE:
            self.parts.view.stats.set_unit(throughput(self.parts.form.config().to_dict()).unit)

    def _show_estimate(self) -> None:
        """The next run's time from a measurement of the same speed settings, or that there is none."""
        parts = self.parts
        parts.buttons.show_estimate(parts.estimates.text_for_form(parts.form) if self.torch_loaded else "")

    @Slot()
    def _on_controls_changed(self) -> None:
        self._update_controls()

    def _update_controls(self) -> None:
        running, parts, form = self.controller.running, self.parts, self.parts.form
        form.set_editable(not running)
        parts.peak.set_running(running)
        parts.what_if.set_running(running)
        kind = parts.launched.device_kind if running and parts.launched.script else form.device_kind()
        compare_problem = (
            QCoreApplication.translate("MainWindow", COMPARE_ONE_PROCESS) if int(form.value("nproc")) > 1 else None
        )
        form_problem = None if form.valid else core_text(form.message)
        elsewhere = parts.remote.not_here_yet()  # the device is another machine's: what acts here is off
        parts.buttons.update_for(
            self.state,
            running,
            self.torch_loaded,
            form_problem,
            parts.insight.searching,
            kind,
            compare_problem,
            elsewhere,
        )
        parts.insight.update_controls(running, self.torch_loaded, kind, elsewhere)
        parts.menus.update_for(self.state, self.controller.can_checkpoint)
        parts.menus.watch_action.setEnabled(not running and not parts.insight.searching)  # needs no torch here
        can_start = not running and self.torch_loaded and not parts.insight.searching
        parts.resumer.update_for(can_start)
        parts.history.set_can_start(can_start)

    # ---- persistence and closing -----------------------------------------------------------------
    def save_settings(self) -> None:
        window_settings.save(self.settings, self, self.parts.form, self.parts.splitters())

    @Slot()
    def _on_about_to_quit(self) -> None:
        if self.controller.data_parallel:
            self.controller.shutdown(CLOSE_WAIT_MS)

    def shutdown_predictions(self) -> None:
        """Predictions being worked out end within seconds (a what-if table stops at its next prediction): their
        threads must not outlive the window."""
        parts = self.parts
        for part in (parts.peak, parts.what_if, parts.view.breakdown_view.predicted, parts.insight.advice_task):
            part.shutdown()

    def _show_closing(self) -> None:
        """Quit waits seconds for the run to stop: say so now (painted before the wait blocks the window) and
        grey Quit out meanwhile."""
        self.parts.menus.quit_action.setEnabled(False)
        self.parts.run_control.label.setText(WindowState.STOPPING.shown)
        self.statusBar().showMessage(self.tr("stopping the run before closing…"))
        self.statusBar().repaint()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop a run before closing; never let a running QThread be destroyed."""
        parts = self.parts
        if not parts.insight.shutdown(CLOSE_WAIT_MS):
            # a trial outlasts the wait: close once the search's thread has ended
            if not self._close_pending:  # connect once, however often the user tries to close
                parts.insight.finder_panel.task.ended.connect(self.close)
            self._close_pending = True
            parts.view.log.add(self.tr("waiting for the batch-size trial to finish before closing"), "warning")
            event.ignore()
            return
        if parts.run_control.stopping_processes:  # closed again (Ctrl+C) while the processes stop: that close goes on
            event.ignore()
            return
        if self.controller.data_parallel or self.controller.running:
            self._show_closing()
        if not parts.run_control.stop_for_close(parts.launched, self, CLOSE_WAIT_MS):
            self._close_pending = True  # the current step outlasts the wait: close once the run's thread has ended
            event.ignore()
            return
        parts.menus.quit_action.setEnabled(True)
        self.shutdown_predictions()
        parts.device_watch.stop()
        parts.remote.close()
        parts.insight.stop()
        parts.view.stop()
        parts.menus.close_snapshots()
        parts.history.stop()
        parts.compare.view.stop()
        self.save_settings()
        event.accept()
