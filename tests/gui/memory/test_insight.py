"""The window's memory insight: the breakdown tab, the out-of-memory banner and its three choices, the
batch-size finder tab, the NVML tab and the snapshot controls, as a user on a CPU-only machine sees them."""

from __future__ import annotations

import functools
import os
import re
import sys
import threading
import types

import pytest
import torch
from PySide6.QtCore import Qt

import gpu_train_monitor.device.nvml
import gpu_train_monitor.engine.recipe
import gpu_train_monitor.finder.search
from gpu_train_monitor.base.errors import UserError
from gpu_train_monitor.base.text import Message
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.device.nvml import GpuProcess, GpuStatus
from gpu_train_monitor.events.events import MemoryBreakdown, OutOfMemory, RunFinished
from gpu_train_monitor.events.summary import RunSummary
from gpu_train_monitor.gui.memory.finder_panel import FinderPanel
from gpu_train_monitor.gui.memory.nvml_panel import NvmlPanel
from gpu_train_monitor.gui.views.breakdown_view import BreakdownView
from gpu_train_monitor.gui.views.window_state import WindowState
from gpu_train_monitor.gui.window.main_window import MainWindow
from tests.support.gui_support import FAST
from tests.support.translator_support import translated

RUN_TIMEOUT_MS = 60_000


def log_text(window: MainWindow) -> str:
    return "\n".join(window.parts.view.log.lines())


def click(qtbot, button) -> None:
    assert button.isEnabled(), button.toolTip()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


# --- the breakdown tab ----------------------------------------------------------------------------------


def test_breakdown_tab_shows_what_holds_the_memory_after_a_run(qtbot, window):
    assert all(label.text() == "–" for label in window.parts.view.breakdown_view.value_labels.values())  # nothing yet
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        click(qtbot, window.parts.buttons.start_button)
    assert ended.args == [WindowState.FINISHED]

    view = window.parts.view.breakdown_view
    assert view.last is not None and view.last.step >= 1
    # the dataset row only when the run keeps its dataset on the device
    assert view.is_shown("dataset_bytes") == (view.last.dataset_bytes > 0)
    for key, label in view.value_labels.items():
        if not view.is_shown(key):
            continue
        assert getattr(view.last, key) > 0, key
        size = r"[\d.]+\s(B|kB|MB|GB)"  # the prediction beside it once it has come (the dataset has none)
        assert re.fullmatch(rf"{size}\s\(\d+%\)( · predicted {size})?", label.text()), (key, label.text())
    # tiny-cnn's weights and buffers: 94,762 float32 parameters + 1,816 bytes of BatchNorm buffers
    shown = {key: label.text().replace("\u00a0", " ") for key, label in view.value_labels.items()}  # unbroken spaces
    assert shown["params_bytes"].startswith("380.86 kB")
    assert shown["batch_bytes"].startswith("393.47 kB")  # 32 images of 3x32x32 floats + labels
    assert sum(value for _, value, _ in view.bar.values) == view.last.total_bytes
    assert "parameters:" in view.bar.toolTip() and "activations + workspace:" in view.bar.toolTip()
    assert all(phase in view.phases.text() for phase in ("forward", "backward", "optimizer"))
    assert "autograd saved" in view.note.text()  # the CPU has no allocator peak: it says how it measured


def breakdown(dataset_bytes: int) -> MemoryBreakdown:
    return MemoryBreakdown(
        step=3,
        params_bytes=4_000_000,
        grads_bytes=4_000_000,
        optimizer_bytes=4_000_000,
        batch_bytes=1_000_000,
        activations_bytes=7_000_000,
        dataset_bytes=dataset_bytes,
        phase_peaks=(("forward", 10), ("backward", 20), ("optimizer", 30)),
        method="allocator",
    )


def grid_cell(view: BreakdownView, key: str) -> tuple[int, int]:
    """(row, column) of a part's value label in the view's grid."""
    row, column, _, _ = view.grid.getItemPosition(view.grid.indexOf(view.value_labels[key]))
    return row, column


def test_breakdown_shows_a_resident_dataset_as_its_own_row_and_hides_a_streamed_one(qtbot):
    view = BreakdownView()
    qtbot.addWidget(view)
    assert not view.is_shown("dataset_bytes")  # nothing measured yet

    view.show_breakdown(breakdown(dataset_bytes=20_000_000))  # resident: 20 MB of the 40 MB on the device
    assert view.is_shown("dataset_bytes")
    assert view.value_labels["dataset_bytes"].text() == "20.00 MB (50%)"
    names = [name for name, _, _ in view.bar.values]
    assert names == [
        "parameters",
        "gradients",
        "optimizer state",
        "dataset on device",
        "batch",
        "activations + workspace",
    ]  # after the model's own memory, before the step's
    assert "dataset on device: 20.00 MB (50%)" in view.bar.toolTip()
    assert grid_cell(view, "dataset_bytes") == (1, 2)  # fourth part: first of the second row
    assert grid_cell(view, "batch_bytes") == (1, 5)

    view.show_breakdown(breakdown(dataset_bytes=0))  # streamed: the row goes, leaving no gap
    assert not view.is_shown("dataset_bytes")
    assert "dataset on device" not in [name for name, _, _ in view.bar.values]
    assert "dataset on device" not in view.bar.toolTip()
    assert grid_cell(view, "batch_bytes") == (1, 2)
    assert sum(value for _, value, _ in view.bar.values) == breakdown(0).total_bytes


def test_breakdown_names_its_parts_and_phases_in_the_users_language(qtbot):
    with translated(
        {
            ("breakdown_view", "parameters"): "参数",
            ("breakdown_view", "forward"): "前向",
            ("BreakdownView", ", "): "，",
            ("BreakdownView", "Phase peaks at step {step}: {peaks}"): "第 {step} 步各阶段峰值：{peaks}",
        }
    ):
        view = BreakdownView()
        qtbot.addWidget(view)
        view.show_breakdown(breakdown(dataset_bytes=0))
        assert view.bar.values[0][0] == "参数" and "参数: 4.00 MB (20%)" in view.bar.toolTip()
        assert view.phases.text() == "第 3 步各阶段峰值：前向 10 B，backward 20 B，optimizer 30 B"


# --- out of memory ----------------------------------------------------------------------------------------


def test_out_of_memory_offers_a_retry_with_half_the_batch_that_runs(qtbot, window, batches_above_16_run_out_of_memory):
    window.parts.form.set_config(FAST.replace(batch_size=32, on_oom="stop"))
    assert not window.parts.insight.oom_banner.isVisible()
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        click(qtbot, window.parts.buttons.start_button)
    assert ended.args == [WindowState.OOM]
    assert window.parts.run_control.label.text() == "oom"

    banner = window.parts.insight.oom_banner
    assert banner.isVisible()
    assert "Out of memory" in banner.message.text() and "batch size 32" in banner.message.text()
    assert banner.retry_button.text() == "Retry with batch 16" and banner.retry_button.isEnabled()
    assert banner.finder_button.isVisible() and banner.dismiss_button.isVisible()
    assert "ERROR: out of memory at step 1 with batch size 32" in log_text(window)

    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        click(qtbot, banner.retry_button)
        assert not banner.isVisible()
    assert ended.args == [WindowState.FINISHED]  # 16 fits
    assert window.parts.form.value("batch_size") == 16
    assert "retrying with batch size 16" in log_text(window)
    assert "starting: tiny-cnn on cpu, synthetic, batch 16" in log_text(window)
    assert len(window.parts.view.loss_plot.data) == FAST.max_steps


def oom_stop_events(batch_size: int) -> list[object]:
    """What a run that stopped out of memory at its first step sends the window."""
    message = f"out of memory at step 1 with batch size {batch_size}: asked for 536.87 MB, 1.00 GB free"
    summary = RunSummary(
        status="oom",
        steps=0,
        samples=0,
        wall_s=0.5,
        samples_per_s=None,
        loss_first=None,
        loss_last=None,
        val_accuracy=None,
        device="cpu",
        device_name="test",
        peak_allocated_bytes=0,
        peak_reserved_bytes=0,
        peak_rss_bytes=0,
        config={},
    )
    return [
        OutOfMemory(0, batch_size, 512 * 2**20, 10**9, 0, "stop", None, message),
        RunFinished("oom", 0, message + "; try a smaller batch size or --on-oom shrink", False, summary),
    ]


def test_find_a_batch_size_from_the_banner_opens_the_finder_and_searches(qtbot, window, fast_trials):
    memory = fast_trials(100_000_000, 1_000_000)
    window.parts.form.set_config(FAST.replace(synthetic_samples=4096))  # a training set above every batch tried
    for event in oom_stop_events(64):
        window._on_run_event(event)
    assert (
        not window.parts.insight.oom_banner.isVisible()
    )  # offered once the run's thread has ended, so Retry can start
    window._on_run_finished()
    banner = window.parts.insight.oom_banner
    assert banner.isVisible() and banner.retry_button.text() == "Retry with batch 32"
    assert window.parts.tabs.currentWidget() is not window.parts.insight.finder_panel

    panel = window.parts.insight.finder_panel
    panel.capacity.setValue(1.0)  # GB: plan for a 1 GB device
    with qtbot.waitSignal(panel.task.ended, timeout=RUN_TIMEOUT_MS):
        click(qtbot, banner.finder_button)
        assert window.parts.tabs.currentWidget() is panel
        assert not banner.isVisible()
    assert memory.tried  # the search ran, with the form's settings
    assert panel.result is not None and panel.result.batch_size == 800  # (0.9 GB - 100 MB) / 1 MB per image
    assert "Largest batch that fits: 800" in panel.result_label.text()
    assert "batch-size search: 800 fits" in log_text(window)

    click(qtbot, panel.use_button)
    assert window.parts.form.value("batch_size") == 800
    assert "batch size set to 800 from the finder" in log_text(window)


def test_stop_here_dismisses_the_banner(qtbot, window):
    for event in oom_stop_events(1):
        window._on_run_event(event)
    window._on_run_finished()
    assert window.parts.insight.oom_banner.isVisible()
    assert not window.parts.insight.oom_banner.retry_button.isEnabled()  # batch 1 cannot be halved
    click(qtbot, window.parts.insight.oom_banner.dismiss_button)
    assert not window.parts.insight.oom_banner.isVisible()


# --- the finder tab ---------------------------------------------------------------------------------------


def test_finder_plots_every_trial_the_fit_line_and_the_limit(qtbot, window, fast_trials):
    memory = fast_trials(100_000_000, 1_000_000)
    window.parts.form.set_config(FAST.replace(synthetic_samples=4096))  # a training set above every batch tried
    panel = window.parts.insight.finder_panel
    window.parts.tabs.setCurrentWidget(panel)
    panel.capacity.setValue(1.0)
    panel.margin.setValue(0.1)
    shown: list[int] = []
    panel.task.progress.connect(lambda trial: shown.append(trial.batch_size))
    with qtbot.waitSignal(panel.task.ended, timeout=RUN_TIMEOUT_MS):
        click(qtbot, panel.find_button)
        assert not panel.find_button.isEnabled() and panel.stop_button.isEnabled()
    assert shown == memory.tried  # each trial reached the panel as it ended

    fits_x, fits_y = panel.fit_scatter.getData()
    fails_x, _ = panel.fail_scatter.getData()
    assert sorted(fits_x) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768]
    assert sorted(fails_x) == [832, 896, 1024]  # above 0.9 GB
    assert list(fits_y) == [memory.fixed + memory.per_sample * x for x in fits_x]
    line_x, line_y = panel.fit_line.getData()
    assert list(line_x) == [0, 1024]
    assert list(line_y) == [100_000_000, 100_000_000 + 1024 * 1_000_000]
    assert panel.limit_line.isVisible() and panel.limit_line.value() == 900_000_000
    assert panel.use_button.text() == "Use batch size 800" and panel.use_button.isEnabled()
    assert panel.find_button.isEnabled() and not panel.stop_button.isEnabled()


def test_finder_says_when_even_batch_1_does_not_fit(qtbot, window, fast_trials):
    fast_trials(2_000_000_000, 1_000_000)  # the model alone needs 2 GB
    panel = window.parts.insight.finder_panel
    panel.capacity.setValue(1.0)
    with qtbot.waitSignal(panel.task.ended, timeout=RUN_TIMEOUT_MS):
        click(qtbot, panel.find_button)
    assert "even batch size 1 needs more than 0.90 GB" in panel.result_label.text()
    assert "ERROR: batch-size search: even batch size 1" in log_text(window)
    assert not panel.use_button.isEnabled() and panel.find_button.isEnabled()


def test_stop_search_ends_the_search_after_the_current_trial(qtbot, window, monkeypatch):
    release = threading.Event()
    tried: list[int] = []

    def slow_trial(config: RunConfig, batch: int, steps: int) -> int:
        tried.append(batch)
        release.wait(30)  # a real trial takes seconds
        return 10**6 * batch

    monkeypatch.setattr(
        gpu_train_monitor.finder.search,
        "find_batch_size",
        functools.partial(gpu_train_monitor.finder.search.find_batch_size, measure=slow_trial),
    )
    panel = window.parts.insight.finder_panel
    panel.capacity.setValue(100.0)
    try:
        click(qtbot, panel.find_button)
        qtbot.waitUntil(lambda: tried == [1], timeout=RUN_TIMEOUT_MS)
        with qtbot.waitSignal(panel.task.ended, timeout=RUN_TIMEOUT_MS):
            click(qtbot, panel.stop_button)
            release.set()
    finally:
        release.set()  # never leave the search's thread blocked when the window closes
    assert tried == [1]  # no trial started after Stop
    assert panel.result_label.text() == "the batch-size search was stopped"
    assert panel.find_button.isEnabled() and not panel.stop_button.isEnabled() and not panel.use_button.isEnabled()


def test_a_failed_search_is_told_from_the_error_itself_in_the_users_language(qtbot, monkeypatch):
    """The search's thread passes on English text; the panel shows the error's own structure, translated."""

    def refuse(config, **_):
        raise UserError(Message("even batch size {batch} needs more than {limit}", batch=1, limit="0.90 GB"))

    monkeypatch.setattr(gpu_train_monitor.finder.search, "find_batch_size", refuse)
    panel = FinderPanel(lambda: FAST)
    qtbot.addWidget(panel)
    logged: list[tuple[str, str]] = []
    panel.log.connect(lambda text, level: logged.append((text, level)))
    with translated(
        {
            ("", "even batch size {batch} needs more than {limit}"): "批大小为 {batch} 也需要超过 {limit}",
            ("FinderPanel", "batch-size search: {error}"): "批大小探测：{error}",
        }
    ):
        with qtbot.waitSignal(panel.task.ended, timeout=RUN_TIMEOUT_MS):
            panel.start_search(FAST)
    assert panel.result_label.text() == "批大小为 1 也需要超过 0.90 GB"
    assert logged[-1] == ("批大小探测：批大小为 1 也需要超过 0.90 GB", "error")
    assert not panel.use_button.isEnabled() and panel.find_button.isEnabled()


# --- NVML and snapshots ------------------------------------------------------------------------------------


def test_nvml_tab_says_why_there_are_no_device_wide_readings(qtbot, window, monkeypatch):
    assert "cpu: NVML reports on NVIDIA GPUs only" in window.parts.insight.nvml_panel.summary.text()

    # a CUDA device selected, but no NVIDIA driver: NVML cannot start
    monkeypatch.setattr(gpu_train_monitor.device.nvml, "_state", {"initialised": None})
    monkeypatch.setattr(gpu_train_monitor.device.nvml, "_handles", {})
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` fails as without the library
    window.parts.device_watch.timer.stop()  # the stand-in probe below can only name its device
    monkeypatch.setattr(window.parts.insight, "probe", types.SimpleNamespace(device=torch.device("cuda", 0)))
    window.parts.insight._on_nvml_poll()
    assert "NVML is not available" in window.parts.insight.nvml_panel.summary.text()
    assert "PyTorch's own counters still work" in window.parts.insight.nvml_panel.summary.text()
    assert window.parts.insight.nvml_panel.table.rowCount() == 0


def test_nvml_panel_explains_the_gap_between_the_device_and_pytorch(qtbot):
    panel = NvmlPanel()
    qtbot.addWidget(panel)
    status = GpuStatus(
        used_bytes=10 * 10**9,
        total_bytes=80 * 10**9,
        utilization_percent=55,
        memory_utilization_percent=30,
        temperature_c=61,
        power_w=300.0,
        power_limit_w=700.0,
        processes=(
            GpuProcess(os.getpid(), "python", 6_500_000_000),
            GpuProcess(4242, "other-trainer", 3_500_000_000),
            GpuProcess(4343, "?", None),
        ),
    )
    panel.show_status(status, reserved_bytes=6 * 10**9)
    summary = panel.summary.text()
    assert summary.startswith("Device used 10.00 GB of 80.00 GB")
    assert "utilization 55%" in summary and "61 °C" in summary and "300 W / 700 W" in summary
    gap = panel.gap.text()
    assert "PyTorch reserved 6.00 GB; the device shows 4.00 GB more." in gap
    assert "This process: 6.50 GB, of which 500.00 MB is the CUDA context" in gap
    assert "Other processes: 3.50 GB." in gap
    rows = [[panel.table.item(r, c).text() for c in range(3)] for r in range(panel.table.rowCount())]
    assert rows == [
        [str(os.getpid()), "python (this app)", "6.50 GB"],
        ["4242", "other-trainer", "3.50 GB"],
        ["4343", "?", "n/a"],
    ]

    panel.show_unavailable("NVML is not available")  # the device changed to one without NVML
    assert panel.summary.text() == "NVML is not available" and panel.gap.text() == ""
    assert panel.table.rowCount() == 0


def test_snapshot_controls_are_disabled_on_the_cpu_with_the_reason(qtbot, window):
    assert window.parts.form.device_kind() == "cpu"
    assert not window.parts.insight.record_history.isEnabled()
    assert (
        "CUDA" in window.parts.insight.record_history.toolTip()
        and "pick a CUDA device" in window.parts.insight.record_history.toolTip()
    )
    assert not window.parts.insight.save_snapshot_button.isEnabled()
    assert "CUDA only" in window.parts.insight.save_snapshot_button.toolTip()
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS):
        click(qtbot, window.parts.buttons.start_button)
        assert (
            not window.parts.insight.record_history.isEnabled()
            and not window.parts.insight.save_snapshot_button.isEnabled()
        )
        assert not window.controller.recording_history


def test_a_memory_snapshot_is_never_saved_over_the_run_store(qtbot, window, monkeypatch):
    from gpu_train_monitor.gui.qt import file_dialogs

    store = str(window.controller.store_path)
    requested: list[str] = []
    monkeypatch.setattr(file_dialogs, "get_save_file_name", lambda *args, **kwargs: (store, ""))
    monkeypatch.setattr(window.controller, "request_snapshot", requested.append)
    window.parts.insight._on_save_snapshot()
    assert requested == []
    assert window.parts.view.log.lines()[-1].endswith("is the run store; give another path")


def test_out_of_memory_during_validation_offers_the_same_choices(qtbot, window):
    message = "out of memory during validation after epoch 1 with batch size 64: asked for 536.87 MB, 1.00 GB free"
    summary = oom_stop_events(64)[1].summary
    window._on_run_event(OutOfMemory(12, 64, 512 * 2**20, 10**9, 0, "stop", None, message, phase="validation"))
    window._on_run_event(RunFinished("oom", 12, message, False, summary))
    window._on_run_finished()
    banner = window.parts.insight.oom_banner
    assert banner.isVisible()
    assert banner.message.text().startswith(
        "<b>Out of memory during validation.</b> out of memory during validation after epoch 1"
    )
    assert banner.retry_button.text() == "Retry with batch 32" and banner.retry_button.isEnabled()
    assert "ERROR: out of memory during validation after epoch 1" in log_text(window)


def test_a_training_out_of_memory_says_training_in_the_banner(qtbot, window):
    for event in oom_stop_events(8):
        window._on_run_event(event)
    window._on_run_finished()
    assert window.parts.insight.oom_banner.message.text().startswith(
        "<b>Out of memory during training.</b> out of memory at step 1"
    )


def test_an_out_of_memory_the_run_recovered_from_offers_nothing(qtbot, window):
    shrink = OutOfMemory(0, 64, None, 10**9, 0, "shrink", 32, "out of memory at step 1 with batch size 64")
    window._on_run_event(shrink)
    window._on_run_finished()
    assert not window.parts.insight.oom_banner.isVisible()
    assert "warning: out of memory at step 1 with batch size 64" in log_text(window)


def test_retry_from_the_banner_waits_while_a_batch_size_search_runs(window, monkeypatch: pytest.MonkeyPatch) -> None:
    """The banner's Retry goes to the same slot as Start: it must not train beside a running search (the
    search's trials reset the device's peak counters) any more than Start may."""
    monkeypatch.setattr(type(window.parts.insight), "searching", property(lambda self: True))
    window.parts.insight.oom_banner.offer(
        128, "Out of memory during training.", "out of memory at step 3 with batch size 128"
    )
    window._on_start()
    assert not window.controller.running


def test_the_form_takes_mps_0_for_the_apple_gpu_it_lists_as_mps() -> None:
    from gpu_train_monitor.gui.form.checks import check_device

    check_device("mps:0", ["cpu", "mps"])  # the CLI accepts mps:0: so does the form
    with pytest.raises(Exception, match="cuda:3"):
        check_device("cuda:3", ["cpu", "cuda:0"])
