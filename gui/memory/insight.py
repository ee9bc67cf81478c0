"""The window's memory insight: the NVML tab's polling, memory snapshots, the out-of-memory banner and
its offer, and the batch-size finder tab.

These parts talk to each other (the banner opens the finder, the finder sets the form's batch size)
more than to the training plots, so they live here and the window only places their widgets, forwards
run events and asks which controls are enabled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QPushButton, QTabWidget, QWidget

from gpu_train_monitor.events import event_text
from gpu_train_monitor.events.events import OutOfMemory
from gpu_train_monitor.gui.form.peak_prediction import problem_text
from gpu_train_monitor.gui.form.settings_form import SettingsForm
from gpu_train_monitor.gui.memory.finder_panel import FinderPanel
from gpu_train_monitor.gui.memory.nvml_panel import NvmlPanel
from gpu_train_monitor.gui.memory.oom_banner import OomBanner
from gpu_train_monitor.gui.qt import file_dialogs
from gpu_train_monitor.gui.qt.core_text import core_text, error_text
from gpu_train_monitor.gui.qt.latest_task import LatestTask
from gpu_train_monitor.gui.qt.locale_format import integer
from gpu_train_monitor.gui.run.controller import RunController
from gpu_train_monitor.gui.views.log_panel import LogPanel
from gpu_train_monitor.gui.views.prediction_jobs import oom_advice_job

NVML_POLL_INTERVAL_MS = 1000


class MemoryInsight(QObject):
    """Owns the NVML, finder and out-of-memory widgets and the snapshot controls, and their slots."""

    controls_changed = Signal()  # a search started, ended or logged: which buttons are enabled changed
    start_requested = Signal()  # Retry with a smaller batch: the form already holds the new batch size

    def __init__(
        self,
        form: SettingsForm,
        log: LogPanel,
        controller: RunController,
        tabs: QTabWidget,
        latest_sample: Callable[[], Any],
        parent: QWidget | None = None,
    ) -> None:
        """`latest_sample`: the MemorySample the window showed last (PyTorch's side of the NVML gap)."""
        super().__init__(parent)
        self.form, self.log, self.controller, self.tabs = form, log, controller, tabs
        self.latest_sample = latest_sample
        self.probe: Any = None  # gpu_train_monitor.memory.probe.MemoryProbe of the selected device, set by the window
        self._offer: OutOfMemory | None = None  # shown once the run that ran out of memory has ended
        self._offer_retry = True  # with Retry and the finder (a run of the form's settings)

        self.nvml_panel = NvmlPanel()
        self.finder_panel = FinderPanel(form.config)
        self.finder_panel.use_batch_size.connect(self._on_use_batch_size)
        self.finder_panel.log.connect(self._on_panel_log)
        self.finder_panel.task.ended.connect(self._on_finder_ended)  # Start waits for a search to end
        self.oom_banner = OomBanner()
        self.oom_banner.retry_smaller.connect(self._on_retry_smaller)
        self.oom_banner.run_finder.connect(self._on_oom_run_finder)
        self.advice_task = LatestTask(self, delay_ms=0, thread_name="oom-advice")  # what would fit, predicted
        self.advice_task.answered.connect(self._on_advice)
        self.record_history = QCheckBox(self.tr("Record memory history"))
        self.save_snapshot_button = QPushButton(self.tr("Save snapshot…"))
        self.save_snapshot_button.clicked.connect(self._on_save_snapshot)
        self.snapshot_controls = QWidget()  # the two above in a row, for the window to place
        row = QHBoxLayout(self.snapshot_controls)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.record_history)
        row.addWidget(self.save_snapshot_button)
        self.nvml_timer = QTimer(self)
        self.nvml_timer.setInterval(NVML_POLL_INTERVAL_MS)
        self.nvml_timer.timeout.connect(self._on_nvml_poll)

    # ---- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> None:
        """Torch has loaded: poll NVML from now on."""
        self.nvml_timer.start()
        self._on_nvml_poll()

    def stop(self) -> None:
        self.nvml_timer.stop()

    @property
    def searching(self) -> bool:
        return self.finder_panel.running

    def shutdown(self, timeout_ms: int) -> bool:
        """Cancel a batch-size search and wait for its thread (bounded). True when none is left running."""
        return self.finder_panel.task.shutdown(timeout_ms)

    @property
    def record_history_requested(self) -> bool:
        return self.record_history.isChecked() and self.record_history.isEnabled()

    def update_controls(
        self, running: bool, torch_loaded: bool, device_kind: str, elsewhere: str | None = None
    ) -> None:
        """`elsewhere`: why memory history is off (the device is another machine's), else None. The finder searches
        on the machine the device is on."""
        cuda = device_kind == "cuda" and torch_loaded
        self.record_history.setEnabled(cuda and not running and elsewhere is None)
        self.record_history.setToolTip(
            elsewhere
            if elsewhere is not None
            else self.tr(
                "Record every allocation (bounded history) so a snapshot can be saved for pytorch.org/memory_viz"
            )
            if cuda
            else self.tr("Memory history is recorded by the CUDA caching allocator: pick a CUDA device")
        )
        recording = running and self.controller.recording_history
        self.save_snapshot_button.setEnabled(recording)
        self.save_snapshot_button.setToolTip(
            self.tr("Save the memory history of this run as a snapshot (opens in pytorch.org/memory_viz)")
            if recording
            else self.tr('Start a run with "Record memory history" ticked (CUDA only) to save a snapshot')
        )
        self.finder_panel.find_button.setEnabled(torch_loaded and not running and not self.searching)

    # ---- out of memory -----------------------------------------------------------------------------
    def run_starting(self) -> None:
        self.oom_banner.hide()
        self._offer = None
        self.advice_task.drop()

    def out_of_memory(self, event: OutOfMemory, retry: bool = True) -> None:
        """`retry`: the form's settings ran out of memory (a watched script's did not: the banner says what
        happened, with nothing of ours to retry)."""
        if event.action == "stop":  # in training or in validation: offered once the run's thread is gone
            self._offer, self._offer_retry = event, retry

    def run_ended(self) -> None:
        """The run's thread is gone, so Retry can start another: show the choices now."""
        if self._offer is not None:
            offer, self._offer = self._offer, None
            self.oom_banner.offer(
                offer.batch_size,
                core_text(event_text.out_of_memory_headline(offer)),
                core_text(event_text.out_of_memory(offer)),
                retry=self._offer_retry,
            )
            if self._offer_retry:  # the form's settings ran out: what would fit them, predicted
                self._advise(offer.batch_size)

    def _advise(self, batch_size: int) -> None:
        """The batch that fits and the cheapest change that makes `batch_size` fit, predicted off the GUI thread
        (seconds): the banner says so once known."""
        if self.probe is None:
            return
        from gpu_train_monitor.base.errors import UserError

        try:
            config = self.form.config(scan=False).replace(batch_size=batch_size)
        except UserError:  # the form changed meanwhile into settings that cannot run: nothing to advise on
            return
        capacity, kind = self.probe.sample().capacity_bytes, self.form.device_kind()
        self.oom_banner.show_advice(self.tr("Predicting what would fit…"))
        self.advice_task.request(oom_advice_job(config, kind, capacity))

    @Slot(object)
    def _on_advice(self, value: object) -> None:
        if value is None:  # stopped: a run started
            return
        if hasattr(value, "fits_batch"):
            self.oom_banner.show_advice(
                self.tr("Predicted: {advice}.").format(advice=core_text(value.text)), value.fits_batch
            )
            return
        short, whole = problem_text(value)
        self.oom_banner.show_advice(self.tr("No prediction of what would fit: {reason}").format(reason=short))
        self.oom_banner.advice.setToolTip(whole)

    @Slot(int)
    def _on_retry_smaller(self, batch_size: int) -> None:
        self.oom_banner.hide()
        self.form.set_batch_size(batch_size)
        self.log.add(self.tr("retrying with batch size {batch}").format(batch=integer(batch_size)))
        self.start_requested.emit()

    @Slot()
    def _on_oom_run_finder(self) -> None:
        self.oom_banner.hide()
        self.tabs.setCurrentWidget(self.finder_panel)
        if not self.controller.running and not self.searching:
            self.finder_panel._on_find()
        self.controls_changed.emit()

    # ---- the finder ---------------------------------------------------------------------------------
    @Slot(int)
    def _on_use_batch_size(self, batch_size: int) -> None:
        self.form.set_batch_size(batch_size)
        self.log.add(self.tr("batch size set to {batch} from the finder").format(batch=integer(batch_size)))

    @Slot(str, str)
    def _on_panel_log(self, text: str, level: str) -> None:
        self.log.add(text, level)
        self.controls_changed.emit()

    @Slot()
    def _on_finder_ended(self) -> None:
        self.controls_changed.emit()

    # ---- snapshots and NVML -------------------------------------------------------------------------
    @Slot()
    def _on_save_snapshot(self) -> None:
        parent = self.parent()
        path, _ = file_dialogs.get_save_file_name(
            parent if isinstance(parent, QWidget) else None,
            self.tr("Save memory snapshot"),
            "memory_snapshot.pickle",
            self.tr("PyTorch memory snapshot (*.pickle)"),
        )
        if not path:
            return
        from gpu_train_monitor.base.errors import UserError
        from gpu_train_monitor.base.outputs import check_distinct_outputs, store_protection

        try:  # the dialog's Save would replace the run store just as well as any other file
            check_distinct_outputs({"memory_snapshot": path}, store_protection(self.controller.store_path))
        except UserError as exc:
            self.log.add(error_text(exc), "error")
            return
        self.request_snapshot(path)

    def request_snapshot(self, path: str) -> None:
        self.controller.request_snapshot(path)
        self.log.add(self.tr("memory snapshot requested: saved at the next step boundary to {path}").format(path=path))

    @Slot()
    def _on_nvml_poll(self) -> None:
        if self.probe is None:
            return
        device = self.probe.device
        self.nvml_panel.show_cache(self.latest_sample(), device.type)  # the allocator's side, with or without NVML
        if device.type != "cuda":
            self.nvml_panel.show_unavailable(
                self.tr("The selected device is {kind}: NVML reports on NVIDIA GPUs only.").format(kind=device.type)
            )
            return
        from gpu_train_monitor.device import nvml

        status = nvml.status(device.index or 0)
        if status is None:
            self.nvml_panel.show_unavailable(
                self.tr(
                    "NVML is not available (no NVIDIA driver or library found): "
                    "device-wide readings cannot be shown. PyTorch's own counters "
                    "still work."
                )
            )
            return
        sample = self.latest_sample()
        reserved = sample.reserved_bytes if sample is not None else None
        self.nvml_panel.show_status(status, reserved)
