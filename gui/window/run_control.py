"""The window's hold on a run: its `WindowState`, set as the run starts, moved on by the run's events and settled
once its thread (or its processes) are gone, and the commands to a run under way: pause or resume, stop, clear
the cache, stop for the window's close. The state shows in the run's numbers and in the status bar's label; the
window enables its controls by it (`changed`). Also a starting run's config as the log names it.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QObject, Signal, Slot
from PySide6.QtWidgets import QLabel, QWidget

from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.compare.events import ComparisonFinished
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.events.events import RunFinished, RunPaused, RunResumed, RunStarted
from gpu_train_monitor.gui.form.settings_form import SettingsForm
from gpu_train_monitor.gui.memory.device_watch import DeviceWatch
from gpu_train_monitor.gui.qt.core_text import error_text
from gpu_train_monitor.gui.run.controller import RunController
from gpu_train_monitor.gui.run.launched_run import LaunchedRun
from gpu_train_monitor.gui.views.log_panel import LogPanel
from gpu_train_monitor.gui.views.stats_panel import StatsPanel
from gpu_train_monitor.gui.views.window_state import WindowState


class RunControl(QObject):
    """`state`: where the run is now; `final`: what it ends as once its thread or processes are gone."""

    changed = Signal()  # the state changed: the window enables what applies now

    def __init__(
        self,
        controller: RunController,
        stats: StatsPanel,
        log: LogPanel,
        device_watch: DeviceWatch,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.controller, self.stats, self.log, self.device_watch = controller, stats, log, device_watch
        self.label = QLabel(WindowState.IDLE.shown)  # for the status bar
        self.state = WindowState.IDLE
        self.final = WindowState.FINISHED
        self.stopping_processes = False  # the window closes mid data-parallel run: waiting for its processes

    def set(self, state: WindowState) -> None:
        self.state = state
        self.stats.set_state(state)
        self.label.setText(state.shown)
        self.changed.emit()

    def starting(self) -> None:
        self.final = WindowState.FINISHED
        self.set(WindowState.STARTING)

    def follow(self, event: object, single: bool) -> None:
        """Move on by `event`; `single`: a run of its own (a comparison's runs end with the comparison)."""
        match event:
            case ComparisonFinished():
                self.finishing(WindowState.after(event.result.status))
            case RunStarted() if self.state is not WindowState.STOPPING:  # Stop during setup: stay stopping
                self.set(WindowState.RUNNING)
            case RunPaused():
                self.set(WindowState.PAUSED)
            case RunResumed():
                self.set(WindowState.RUNNING)
            case RunFinished() if single:
                self.finishing(WindowState.after(event.status))

    def finishing(self, final: WindowState) -> None:
        """The run has ended as `final`; its thread or processes are still going."""
        self.final = final
        self.set(WindowState.FINISHING)

    def settle(self) -> WindowState:
        """The run's thread (or processes) are gone: the final state, now shown, and returned."""
        self.set(self.final)
        return self.final

    # ---- commands to a run under way --------------------------------------------------------------
    @Slot()
    def pause_or_resume(self) -> None:
        if not self.controller.running:
            return
        try:
            if self.state is WindowState.PAUSED:
                self.controller.resume()
            else:
                self.controller.pause()
        except UserError as exc:  # a data-parallel run's rank 0 cannot be reached
            self.log.add(error_text(exc), "error")

    @Slot()
    def stop(self) -> None:
        if self.controller.running:
            self.controller.request_stop()
            self.set(WindowState.STOPPING)

    @Slot()
    def clear_cache(self) -> None:
        """During a run, at its next step boundary; at rest, now (`DeviceWatch.clear_cache`)."""
        if not self.controller.running:
            self.device_watch.clear_cache()
            return
        try:
            self.controller.request_cache_clear()  # applied by the session at the next step boundary
        except UserError as exc:
            self.log.add(error_text(exc), "error")
            return
        self.log.add(
            QCoreApplication.translate(
                "MainWindow", "cache clear requested: applied at the next step boundary on every process"
            )
            if self.controller.data_parallel
            else QCoreApplication.translate("MainWindow", "cache clear requested: applied at the next step boundary")
        )

    def stop_for_close(self, launched: LaunchedRun, parent: QWidget, wait_ms: int) -> bool:
        """The window closes: stop a data-parallel run's processes (a modal wait over `parent`) and a run's thread,
        each waited for up to `wait_ms`; False when the current step outlasts the wait (the run's thread is still
        going: never destroy a running QThread)."""
        if self.controller.data_parallel:
            self.set(WindowState.STOPPING)
            self.stopping_processes = True
            try:
                launched.stop_for_close(parent, lambda: self.controller.shutdown(wait_ms))
            finally:
                self.stopping_processes = False
        if self.controller.running:
            self.set(WindowState.STOPPING)
            if not self.controller.shutdown(wait_ms):
                self.log.add(
                    QCoreApplication.translate("MainWindow", "waiting for the current step to finish before closing"),
                    "warning",
                )
                return False
        return True


def resolved_for_log(form: SettingsForm, config: RunConfig) -> RunConfig:
    """`config` with auto's model and device named as this machine resolves them ("starting: tiny-cnn on cpu",
    not "auto on auto"), for the log; as it is where `form` cannot tell them yet."""
    if not form.devices.known:
        return config
    from gpu_train_monitor.model.models import resolve_model  # imports torch: loaded once the devices are known

    device = form.resolved_spec(config.device)
    try:
        return config.replace(
            device=device, model=resolve_model(config.model, form.devices.kind(device), config.dataset)
        )
    except Exception:  # noqa: BLE001 - a name the run itself will refuse, in its own words
        return config.replace(device=device)
