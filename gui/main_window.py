"""The main window: settings on the left, live loss and memory plots on the right, run control, log.

It owns no training logic: runs go through `RunController` (a QThread per run) and arrive back as core
events in `_on_run_event`. Plots are redrawn by one timer at <= 30 Hz; at rest another timer polls the
same `MemoryProbe` so the memory plot stays live and a cache clear is visible.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QCloseEvent, QIcon, QKeySequence
from PySide6.QtWidgets import (QCheckBox, QFileDialog, QGroupBox, QHBoxLayout, QLabel, QMainWindow, QPushButton,
                               QScrollArea, QSplitter, QTabWidget, QVBoxLayout, QWidget)

from core.config import RunConfig
from core.events import (CacheCleared, EpochEnded, LogMessage, MemoryBreakdown, OutOfMemory, RunFinished,
                         RunPaused, RunResumed, RunStarted, SnapshotSaved, StepsReported)
from core.units import format_bytes
from gui.breakdown_view import BreakdownView
from gui.finder_panel import FinderPanel
from gui.log_panel import LogPanel
from gui.nvml_panel import NvmlPanel
from gui.oom_banner import OomBanner
from gui.loss_plot import LossPlot
from gui.memory_plot import MemoryPlot
from gui.resources import ICON, asset
from gui.run_controller import RunController
from gui.settings_form import SettingsForm
from gui.stats_panel import StatsPanel

REDRAW_INTERVAL_MS = 33  # <= 30 Hz
NVML_POLL_INTERVAL_MS = 1000
IDLE_POLL_INTERVAL_MS = 250
CLOSE_WAIT_MS = 5000
FINAL_STATES = {"completed": "finished", "stopped": "stopped", "diverged": "diverged", "oom": "oom",
                "failed": "failed"}


class MainWindow(QMainWindow):
    """GPU Training Monitor's window."""

    run_ended = Signal(str)  # final state, after the run's thread is gone

    def __init__(self, settings: QSettings | None = None) -> None:
        super().__init__()
        self.settings = settings if settings is not None else QSettings("gpu-train-monitor", "GPU Training Monitor")
        self.setWindowTitle("GPU Training Monitor")
        icon_path = asset(ICON)
        if icon_path.is_file():
            self.setWindowIcon(QIcon(str(icon_path)))
        self.controller = RunController(self)
        self.controller.event.connect(self._on_run_event)
        self.controller.crashed.connect(self._on_run_crashed)
        self.controller.run_finished.connect(self._on_run_finished)
        self.probe: Any = None  # core.memory.MemoryProbe for the selected device, once torch has loaded
        self.torch_loaded = False
        self.state = "idle"
        self._final_state = "finished"
        self._close_pending = False
        self._oom_offer: tuple[int, str] | None = None  # shown when the run that ran out of memory has ended
        self._build()
        self._restore_settings()

        self.redraw_timer = QTimer(self)
        self.redraw_timer.setInterval(REDRAW_INTERVAL_MS)
        self.redraw_timer.timeout.connect(self._on_redraw_timer)
        self._redraw_loss_first = True
        self.redraw_timer.start()
        self.idle_timer = QTimer(self)
        self.idle_timer.setInterval(IDLE_POLL_INTERVAL_MS)
        self.idle_timer.timeout.connect(self._on_idle_poll)
        self.nvml_timer = QTimer(self)
        self.nvml_timer.setInterval(NVML_POLL_INTERVAL_MS)
        self.nvml_timer.timeout.connect(self._on_nvml_poll)
        self._last_sample: Any = None
        self._update_controls()

    # ---- layout ----------------------------------------------------------------------------------
    def _build(self) -> None:
        self.form = SettingsForm()
        self.form.validity_changed.connect(self._on_validity_changed)
        self.form.widgets["device"].currentIndexChanged.connect(self._on_device_changed)
        self.form.refresh_devices_button.clicked.connect(self._on_refresh_devices)

        self.start_button = QPushButton("Start")
        self.start_button.setObjectName("startButton")
        self.start_button.setShortcut(QKeySequence("F5"))
        self.start_button.clicked.connect(self._on_start)
        self.pause_button = QPushButton("Pause")
        self.pause_button.setShortcut(QKeySequence("F6"))
        self.pause_button.clicked.connect(self._on_pause_resume)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setShortcut(QKeySequence("Shift+F5"))
        self.stop_button.clicked.connect(self._on_stop)
        self.clear_button = QPushButton("Clear cache")
        self.clear_button.setShortcut(QKeySequence("Ctrl+K"))
        self.clear_button.clicked.connect(self._on_clear_cache)
        buttons = QHBoxLayout()
        for button in (self.start_button, self.pause_button, self.stop_button, self.clear_button):
            buttons.addWidget(button)
        self.record_history = QCheckBox("Record memory history")
        self.save_snapshot_button = QPushButton("Save snapshot…")
        self.save_snapshot_button.clicked.connect(self._on_save_snapshot)
        snapshot_row = QHBoxLayout()
        snapshot_row.addWidget(self.record_history)
        snapshot_row.addWidget(self.save_snapshot_button)

        form_scroll = QScrollArea()
        form_scroll.setWidgetResizable(True)
        form_scroll.setWidget(self.form)
        form_scroll.setMinimumWidth(340)
        form_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        self.stats = StatsPanel()
        stats_box = QGroupBox("Run")
        stats_layout = QVBoxLayout(stats_box)
        stats_layout.addWidget(self.stats)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(4, 4, 4, 4)
        left_layout.addWidget(form_scroll, 1)
        left_layout.addLayout(buttons)
        left_layout.addLayout(snapshot_row)
        left_layout.addWidget(stats_box)

        self.loss_plot = LossPlot()
        self.memory_plot = MemoryPlot()
        self.log = LogPanel()
        self.breakdown_view = BreakdownView()
        self.nvml_panel = NvmlPanel()
        self.finder_panel = FinderPanel(self.form.config)
        self.finder_panel.use_batch_size.connect(self._on_use_batch_size)
        self.finder_panel.log.connect(self._on_panel_log)
        self.finder_panel.task.ended.connect(self._update_controls)  # Start waits for a search to end
        self.tabs = QTabWidget()
        self.tabs.addTab(self.log, "Log")
        self.tabs.addTab(self.breakdown_view, "Memory breakdown")
        self.tabs.addTab(self.nvml_panel, "GPU (NVML)")
        self.tabs.addTab(self.finder_panel, "Batch-size finder")
        self.right_splitter = QSplitter(Qt.Orientation.Vertical)
        self.right_splitter.addWidget(self.loss_plot)
        self.right_splitter.addWidget(self.memory_plot)
        self.right_splitter.addWidget(self.tabs)
        self.right_splitter.setSizes([400, 300, 180])
        self.oom_banner = OomBanner()
        self.oom_banner.retry_smaller.connect(self._on_retry_smaller)
        self.oom_banner.run_finder.connect(self._on_oom_run_finder)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.oom_banner)
        right_layout.addWidget(self.right_splitter, 1)

        self.main_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.main_splitter.addWidget(left)
        self.main_splitter.addWidget(right)
        self.main_splitter.setStretchFactor(1, 1)
        self.main_splitter.setSizes([360, 900])
        self.setCentralWidget(self.main_splitter)

        self.device_status = QLabel("device: loading PyTorch…")
        self.state_status = QLabel("idle")
        self.statusBar().addWidget(self.device_status, 1)
        self.statusBar().addPermanentWidget(self.state_status)
        self.resize(1280, 860)

    # ---- torch arrives ---------------------------------------------------------------------------
    @Slot()
    def on_torch_ready(self) -> None:
        """Called once torch has been imported (in the background at launch): fill devices and models."""
        self.torch_loaded = True
        from core.models import available_models

        self.form.set_models(available_models())
        self._on_refresh_devices()
        self.idle_timer.start()
        self.nvml_timer.start()
        self._on_nvml_poll()
        self._update_controls()

    @Slot()
    def _on_refresh_devices(self) -> None:
        if not self.torch_loaded:
            return
        from core.devices import list_devices

        self.form.set_devices(list_devices(query_free=False))
        self._on_device_changed()

    @Slot()
    def _on_device_changed(self, *_: object) -> None:
        if not self.torch_loaded:
            return
        from core.devices import resolve_device
        from core.errors import UserError
        from core.memory import MemoryProbe

        spec = self.form.value("device")
        try:
            device = resolve_device(spec)
        except UserError as exc:
            self.device_status.setText(f"device: {exc}")
            self.probe = None
            return
        if self.probe is None or self.probe.device != device:
            self.probe = MemoryProbe(device)
            self.memory_plot.clear()
        self.device_status.setText(f"device: {device}")
        self._update_controls()

    # ---- run control -----------------------------------------------------------------------------
    @Slot()
    def _on_start(self) -> None:
        if self.controller.running or not self.torch_loaded:
            return
        try:
            config = self.form.config()
        except Exception as exc:  # the form disables Start on invalid input; this is a last guard
            self.log.add(str(exc), "error")
            return
        self.start_run(config)

    def start_run(self, config: RunConfig) -> None:
        """Start a run with `config` (used by Start and by the screenshot mode)."""
        self.loss_plot.clear()
        self.memory_plot.clear()
        self.stats.reset(0, config.epoch_limit or 0)
        self._final_state = "finished"
        self._set_state("starting")
        self.log.add(f"starting: {config.model} on {config.device}, {config.dataset}, batch {config.batch_size}")
        self.breakdown_view.clear()
        self.oom_banner.hide()
        self._oom_offer = None
        self._last_config = config
        self.controller.start(config, record_memory_history=self.record_history.isChecked()
                              and self.record_history.isEnabled())
        self._update_controls()

    @Slot()
    def _on_pause_resume(self) -> None:
        if not self.controller.running:
            return
        if self.state == "paused":
            self.controller.resume()
        else:
            self.controller.pause()

    @Slot()
    def _on_stop(self) -> None:
        if self.controller.running:
            self.controller.request_stop()
            self._set_state("stopping")
            self._update_controls()

    @Slot()
    def _on_clear_cache(self) -> None:
        if self.controller.running:
            self.controller.request_cache_clear()  # applied by the session at the next step boundary
            self.log.add("cache clear requested: applied at the next step boundary")
            return
        if self.probe is None:
            return
        from core.memory import clear_cache

        freed = clear_cache(self.probe.device)
        self._show_cache_cleared(CacheCleared(None, freed, self.probe.sample()))

    def _show_cache_cleared(self, event: CacheCleared) -> None:
        when = "at rest" if event.step is None else f"at step {event.step}"
        text = f"cleared {format_bytes(event.freed_bytes)}"
        self.memory_plot.add_sample(event.memory)
        self.memory_plot.add_marker(event.memory.time_s, text)
        self.log.add(f"cache cleared {when}: {format_bytes(event.freed_bytes)} freed, "
                     f"reserved now {format_bytes(event.memory.reserved_bytes)}")

    # ---- events from the run ---------------------------------------------------------------------
    @Slot(object)
    def _on_run_event(self, event: object) -> None:
        match event:
            case StepsReported():
                self.loss_plot.add_losses(event.first_step, event.losses)
                self.memory_plot.add_sample(event.memory)
                self.stats.update_progress(event.step, event.epoch, event.samples_per_s, event.eta_s,
                                           event.total_steps)
                self._show_memory(event.memory)
            case RunStarted():
                self.stats.reset(event.total_steps, event.epochs or 0)
                self.memory_plot.add_sample(event.memory)
                if self.state != "stopping":  # Stop clicked during setup: do not flip back to running
                    self._set_state("running")
                cfg = event.config
                self.log.add(f"run started on {event.device} ({event.device_name}): {cfg['model']}, "
                             f"{event.parameters:,} parameters, {cfg['dataset']} ({event.train_samples} train / "
                             f"{event.val_samples} val images, {format_bytes(event.dataset_bytes)}), "
                             f"{event.placement} placement, {event.total_steps} steps")
                self.log.add("config: " + json.dumps(cfg))
            case EpochEnded():
                self.loss_plot.add_epoch_end(event.epoch, event.step, event.val_accuracy)
                acc = "n/a" if event.val_accuracy is None else f"{event.val_accuracy:.2%}"
                train = "n/a" if event.train_loss is None else f"{event.train_loss:.4f}"
                val = "n/a" if event.val_loss is None else f"{event.val_loss:.4f}"
                self.log.add(f"epoch {event.epoch}: train loss {train}, val loss {val}, val accuracy {acc}")
            case CacheCleared():
                self._show_cache_cleared(event)
            case RunPaused():
                self._set_state("paused")
            case RunResumed():
                self._set_state("running")
            case MemoryBreakdown():
                self.breakdown_view.show_breakdown(event)
            case SnapshotSaved():
                self.log.add(f"memory snapshot saved to {event.path} ({format_bytes(event.size_bytes)}) at step "
                             f"{event.step}: open it at https://pytorch.org/memory_viz")
            case OutOfMemory():
                self.memory_plot.add_marker(self._now(), "out of memory", error=True)
                self.log.add(event.message, "error" if event.action == "stop" else "warning")
                if event.action == "stop":  # offered once the run's thread is gone, so Retry can start
                    self._oom_offer = (event.batch_size, event.message)
            case LogMessage():
                self.log.add(event.text, event.level)
            case RunFinished():
                self._final_state = FINAL_STATES[event.status]
                summary = event.summary
                if event.status == "completed":
                    rate = "n/a" if summary.samples_per_s is None else f"{summary.samples_per_s:,.0f} images/s"
                    self.log.add(f"finished: {summary.steps} steps in {summary.wall_s:.1f} s, {rate}, "
                                 f"peak {format_bytes(summary.peak_allocated_bytes)}")
                elif event.status == "stopped":
                    self.log.add(f"stopped at step {event.step}")
                else:
                    self.log.add(f"{event.status}: {event.message}", "error")
                    if event.status != "failed" or not event.user_error:
                        self.memory_plot.add_marker(self._now(), event.status, error=True)
                self._set_state("finishing")

    # ---- memory insight: snapshots, NVML, out-of-memory choices, the finder -----------------------
    @Slot()
    def _on_save_snapshot(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save memory snapshot", "memory_snapshot.pickle",
                                              "PyTorch memory snapshot (*.pickle)")
        if path:
            self.request_snapshot(path)

    def request_snapshot(self, path: str) -> None:
        self.controller.request_snapshot(path)
        self.log.add(f"memory snapshot requested: saved at the next step boundary to {path}")

    @Slot()
    def _on_nvml_poll(self) -> None:
        if not self.torch_loaded or self.probe is None:
            return
        device = self.probe.device
        if device.type != "cuda":
            self.nvml_panel.show_unavailable(f"The selected device is {device.type}: NVML reports on NVIDIA GPUs only.")
            return
        from core import nvml

        status = nvml.status(device.index or 0)
        if status is None:
            self.nvml_panel.show_unavailable("NVML is not available (no NVIDIA driver or library found): "
                                             "device-wide readings cannot be shown. PyTorch's own counters still work.")
            return
        reserved = self._last_sample.reserved_bytes if self._last_sample is not None else None
        self.nvml_panel.show_status(status, reserved)

    @Slot(int)
    def _on_retry_smaller(self, batch_size: int) -> None:
        self.oom_banner.hide()
        self.form.set_batch_size(batch_size)
        self.log.add(f"retrying with batch size {batch_size}")
        self._on_start()

    @Slot()
    def _on_oom_run_finder(self) -> None:
        self.oom_banner.hide()
        self.tabs.setCurrentWidget(self.finder_panel)
        if not self.controller.running and not self.finder_panel.running:
            self.finder_panel._on_find()
        self._update_controls()

    @Slot(int)
    def _on_use_batch_size(self, batch_size: int) -> None:
        self.form.set_batch_size(batch_size)
        self.log.add(f"batch size set to {batch_size} from the finder")

    @Slot(str, str)
    def _on_panel_log(self, text: str, level: str) -> None:
        self.log.add(text, level)
        self._update_controls()

    def _now(self) -> float:
        import time

        return time.monotonic()

    def _show_memory(self, sample: Any) -> None:
        self._last_sample = sample
        current = sample.allocated_bytes
        self.stats.update_memory(current, sample.peak_allocated_bytes)

    @Slot(str)
    def _on_run_crashed(self, message: str) -> None:
        self._final_state = "failed"
        self.log.add("the run crashed: " + message.strip().splitlines()[0], "error")
        for line in message.strip().splitlines()[1:]:
            self.log.add(line, "error")

    @Slot()
    def _on_run_finished(self) -> None:
        """The run's thread is gone: back to ready."""
        self._set_state(self._final_state)
        self._update_controls()
        if self._oom_offer is not None:
            self.oom_banner.offer(*self._oom_offer)
            self._oom_offer = None
        self.run_ended.emit(self._final_state)
        if self._close_pending:
            self.close()

    # ---- timers ----------------------------------------------------------------------------------
    @Slot()
    def _on_redraw_timer(self) -> None:
        # At most one plot per tick: each repaint costs several ms in a software raster, and two in the
        # same event-loop pass doubled the GUI's worst-case latency (tests/benchmarks/gui_latency.py).
        first, second = ((self.loss_plot, self.memory_plot) if self._redraw_loss_first
                         else (self.memory_plot, self.loss_plot))
        if not first.refresh():
            second.refresh()
        self._redraw_loss_first = not self._redraw_loss_first

    @Slot()
    def _on_idle_poll(self) -> None:
        if self.controller.running or self.probe is None:
            return
        sample = self.probe.sample()
        self.memory_plot.add_sample(sample)
        self._show_memory(sample)

    # ---- state -----------------------------------------------------------------------------------
    def _set_state(self, state: str) -> None:
        self.state = state
        shown = "stopping" if state == "finishing" else state
        self.stats.set_state(shown)
        self.state_status.setText(shown)
        self.pause_button.setText("Resume" if state == "paused" else "Pause")
        self._update_controls()  # Pause is enabled only once the run reports "running"

    @Slot(bool, str)
    def _on_validity_changed(self, valid: bool, message: str) -> None:
        self._update_controls()

    def _update_controls(self) -> None:
        running = self.controller.running
        self.form.set_editable(not running)
        can_start = not running and self.torch_loaded and self.form.valid and not self.finder_panel.running
        self.start_button.setEnabled(can_start)
        if not self.torch_loaded:
            self.start_button.setToolTip("PyTorch is still loading")
        elif not self.form.valid:
            self.start_button.setToolTip(self.form.message)
        elif self.finder_panel.running:
            self.start_button.setToolTip("A batch-size search is running: it measures memory, so training waits")
        else:
            self.start_button.setToolTip("Start training (F5)")
        self.pause_button.setEnabled(running and self.state in ("running", "paused"))
        self.pause_button.setToolTip("Pause or resume at the next step boundary (F6)")
        self.stop_button.setEnabled(running and self.state not in ("stopping", "finishing"))
        self.stop_button.setToolTip("Stop at the next step boundary (Shift+F5)")
        from_kind = self.form.device_kind()
        cuda = from_kind == "cuda" and self.torch_loaded
        self.record_history.setEnabled(cuda and not running)
        self.record_history.setToolTip(
            "Record every allocation (bounded history) so a snapshot can be saved for pytorch.org/memory_viz"
            if cuda else "Memory history is recorded by the CUDA caching allocator: pick a CUDA device")
        recording = running and self.controller.recording_history
        self.save_snapshot_button.setEnabled(recording)
        self.save_snapshot_button.setToolTip(
            "Save the memory history of this run as a snapshot (opens in pytorch.org/memory_viz)" if recording else
            "Start a run with \"Record memory history\" ticked (CUDA only) to save a snapshot")
        self.finder_panel.find_button.setEnabled(self.torch_loaded and not running and not self.finder_panel.running)
        has_cache = from_kind in ("cuda", "mps") and self.torch_loaded
        self.clear_button.setEnabled(has_cache)
        self.clear_button.setToolTip(
            "Return cached, unused blocks to the driver and show what that freed (Ctrl+K)" if has_cache else
            "The CPU has no caching allocator: there is no cache to clear" if self.torch_loaded else
            "PyTorch is still loading")

    # ---- persistence and closing -----------------------------------------------------------------
    def _restore_settings(self) -> None:
        raw = self.settings.value("config")
        if raw:
            try:
                self.form.set_config(RunConfig.from_dict(json.loads(str(raw))))
            except Exception:  # settings from another version, or edited by hand: keep the defaults
                self.log.add("saved settings could not be used; defaults restored", "warning")
        geometry = self.settings.value("geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        for name, splitter in (("main_splitter", self.main_splitter), ("right_splitter", self.right_splitter)):
            state = self.settings.value(name)
            if isinstance(state, QByteArray):
                splitter.restoreState(state)

    def save_settings(self) -> None:
        self.settings.setValue("config", json.dumps(self.form.values()))
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("main_splitter", self.main_splitter.saveState())
        self.settings.setValue("right_splitter", self.right_splitter.saveState())
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop a run before closing; never let a running QThread be destroyed."""
        if not self.finder_panel.task.shutdown(CLOSE_WAIT_MS):
            # a trial outlasts the wait: close once the search's thread has ended
            self._close_pending = True
            self.finder_panel.task.ended.connect(self.close)
            self.log.add("waiting for the batch-size trial to finish before closing", "warning")
            event.ignore()
            return
        if self.controller.running:
            self._set_state("stopping")
            if not self.controller.shutdown(CLOSE_WAIT_MS):
                # the current step outlasts the wait: close as soon as the run's thread has ended
                self._close_pending = True
                self.log.add("waiting for the current step to finish before closing", "warning")
                event.ignore()
                return
        self.idle_timer.stop()
        self.nvml_timer.stop()
        self.redraw_timer.stop()
        self.save_settings()
        event.accept()
