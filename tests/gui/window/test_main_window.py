"""The window as a user drives it: Start, watch the plots grow, Pause/Resume, Stop, Clear cache, close."""

from __future__ import annotations

import json
import math

from PySide6.QtCore import QSettings, Qt

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.events.events import CacheCleared, RunFinished, RunPaused, RunResumed, StepsReported
from gpu_train_monitor.gui.views.window_state import WindowState
from gpu_train_monitor.gui.window.main_window import MainWindow
from tests.support.gui_support import ENDLESS, FAST, EventRecorder, native_threads_named

OFF_ON_CPU = {"pin_memory": False, "non_blocking": False}  # greyed out on the CPU: not in effect

RUN_TIMEOUT_MS = 60_000


def log_text(window: MainWindow) -> str:
    return "\n".join(window.parts.view.log.lines())


def curve_points(curve) -> int:
    x, _ = curve.getData()
    return 0 if x is None else len(x)


def start(qtbot, window: MainWindow, config: RunConfig) -> None:
    """Click Start with `config` in the form and wait until the run reports its first steps."""
    window.parts.form.set_config(config)
    assert window.parts.buttons.start_button.isEnabled(), window.parts.buttons.start_button.toolTip()
    qtbot.mouseClick(window.parts.buttons.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: window.state is WindowState.RUNNING and len(window.parts.view.loss_plot.data) > 0,
        timeout=RUN_TIMEOUT_MS,
    )


def test_start_is_disabled_until_torch_has_loaded(qtbot, settings):
    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    assert not window.parts.buttons.start_button.isEnabled()
    assert "still loading" in window.parts.buttons.start_button.toolTip()
    window.on_torch_ready()
    assert window.parts.buttons.start_button.isEnabled()
    from gpu_train_monitor.device.devices import resolve_device

    assert window.parts.device_watch.label.text() == f"device: {resolve_device('auto')}"  # the form's default device


def test_short_run_grows_both_plots_and_ends_finished(qtbot, window):
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        qtbot.mouseClick(window.parts.buttons.start_button, Qt.MouseButton.LeftButton)
        assert window.state is WindowState.STARTING
        assert not window.parts.buttons.start_button.isEnabled()
        assert not window.parts.form.widgets["batch_size"].isEnabled()  # the form is locked during a run
    assert ended.args == [WindowState.FINISHED]
    assert window.state is WindowState.FINISHED
    assert window.parts.run_control.label.text() == "completed"  # the Runs table's word

    steps = window.parts.view.loss_plot.data.column(0)
    assert list(steps) == list(range(1, FAST.max_steps + 1))  # one loss per step, in order
    assert all(math.isfinite(x) for x in window.parts.view.loss_plot.data.column(1))
    assert len(window.parts.view.memory_plot.data) >= 2  # run start + at least one report (the plot restarts per run)
    assert window.parts.view.memory_plot.data.last(1) > 0  # the CPU plots process RSS: never zero

    qtbot.waitUntil(lambda: curve_points(window.parts.view.loss_plot.raw_curve) == FAST.max_steps, timeout=2000)
    assert window.parts.view.loss_plot._epoch_lines == []  # 12 of the epoch's 16 steps: no epoch end to mark
    assert curve_points(window.parts.view.loss_plot.val_curve) == 1  # one validation accuracy point
    window.parts.view.memory_plot.refresh()  # the idle poll may have added a sample since the last timer redraw
    assert curve_points(window.parts.view.memory_plot.curves["allocated"]) == len(window.parts.view.memory_plot.data)

    assert window.parts.view.stats.values["step"].text() == f"{FAST.max_steps} / {FAST.max_steps}"
    assert window.parts.view.stats.progress.value() == FAST.max_steps
    assert window.parts.view.stats.values["epoch"].text() == "1 / 1"  # max_steps bounds this run: 6 steps, in 1 epoch
    log = log_text(window)
    assert "training tiny-cnn on cpu (" in log and "config: Device=cpu, Model=tiny-cnn, Dataset=synthetic" in log
    assert f"batch 32, {FAST.max_steps} steps over as many epochs as that takes" in log  # max_steps alone
    assert "epoch 1: train loss" in log
    assert f"finished: {FAST.max_steps} steps" in log

    assert window.parts.buttons.start_button.isEnabled()  # ready for the next run
    assert not window.parts.buttons.stop_button.isEnabled() and not window.parts.buttons.pause_button.isEnabled()
    assert window.parts.form.widgets["batch_size"].isEnabled()
    assert not window.controller.running


def test_pause_holds_the_step_then_resume_and_stop(qtbot, window):
    start(qtbot, window, ENDLESS)
    events = EventRecorder()
    window.controller.event.connect(events.on_event)
    assert window.parts.buttons.pause_button.isEnabled() and window.parts.buttons.pause_button.text() == "Pause"

    qtbot.mouseClick(window.parts.buttons.pause_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.state is WindowState.PAUSED, timeout=RUN_TIMEOUT_MS)
    assert window.parts.buttons.pause_button.text() == "Resume"
    assert window.parts.run_control.label.text() == "paused"
    paused_rows, paused_step = len(window.parts.view.loss_plot.data), events.of(RunPaused)[0].step
    assert paused_rows == paused_step  # every step trained before the pause was reported
    # The paused session still answers cache clears: each one that comes back proves its loop is parked
    # at the same step boundary (a running session would report the steps it trained in between).
    for clears in (1, 2, 3):
        window.parts.run_control.clear_cache()
        qtbot.waitUntil(lambda: len(events.of(CacheCleared)) == clears, timeout=RUN_TIMEOUT_MS)
        assert events.of(CacheCleared)[-1].step == paused_step
    since_pause = events.events[events.events.index(events.of(RunPaused)[0]) :]
    assert not [e for e in since_pause if isinstance(e, StepsReported)]
    assert len(window.parts.view.loss_plot.data) == paused_rows
    assert window.controller.running

    qtbot.mouseClick(window.parts.buttons.pause_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: window.state is WindowState.RUNNING and len(window.parts.view.loss_plot.data) > paused_rows,
        timeout=RUN_TIMEOUT_MS,
    )
    assert events.of(RunResumed)[0].step == paused_step  # no step was trained while paused
    assert window.parts.buttons.pause_button.text() == "Pause"

    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        qtbot.mouseClick(window.parts.buttons.stop_button, Qt.MouseButton.LeftButton)
        assert window.state is WindowState.STOPPING
        assert not window.parts.buttons.stop_button.isEnabled()
    assert ended.args == [WindowState.STOPPED]
    assert window.state is WindowState.STOPPED
    assert f"stopped at step {events.of(RunFinished)[0].step}" in log_text(window)
    assert window.parts.buttons.start_button.isEnabled()


def test_stop_while_paused_ends_the_run(qtbot, window):
    start(qtbot, window, ENDLESS)
    window.parts.run_control.pause_or_resume()
    qtbot.waitUntil(lambda: window.state is WindowState.PAUSED, timeout=RUN_TIMEOUT_MS)
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        window.parts.run_control.stop()
    assert ended.args == [WindowState.STOPPED]
    assert not window.controller.running


def test_stop_clicked_before_the_run_started_never_shows_running_again(qtbot, window, monkeypatch):
    shown: list[str] = []
    set_state = window.parts.view.stats.set_state
    monkeypatch.setattr(window.parts.view.stats, "set_state", lambda state: (shown.append(state), set_state(state)))
    window.parts.form.set_config(ENDLESS)
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        qtbot.mouseClick(window.parts.buttons.start_button, Qt.MouseButton.LeftButton)
        qtbot.mouseClick(
            window.parts.buttons.stop_button, Qt.MouseButton.LeftButton
        )  # while the run is still setting up
        assert window.state is WindowState.STOPPING
    assert ended.args == [WindowState.STOPPED]
    after_stop = shown[shown.index(WindowState.STOPPING) :]
    assert WindowState.RUNNING not in after_stop, shown
    assert after_stop[-1] is WindowState.STOPPED


def test_stop_then_start_again_runs_to_the_end(qtbot, window):
    start(qtbot, window, ENDLESS)
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS):
        window.parts.run_control.stop()
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        window.parts.form.set_config(FAST)
        qtbot.mouseClick(window.parts.buttons.start_button, Qt.MouseButton.LeftButton)
    assert ended.args == [WindowState.FINISHED]
    assert len(window.parts.view.loss_plot.data) == FAST.max_steps  # the plot starts afresh for the new run


def test_clear_cache_is_disabled_with_a_reason_on_the_cpu(window):
    assert window.parts.form.device_kind() == "cpu"
    assert not window.parts.buttons.clear_button.isEnabled()
    assert "CPU has no caching allocator" in window.parts.buttons.clear_button.toolTip()


def test_clear_cache_at_rest_marks_the_plot_and_logs_bytes_freed(window, monkeypatch):
    import gpu_train_monitor.memory.probe

    assert window.probe is not None  # the idle probe for the selected device (the CPU here)
    monkeypatch.setattr(gpu_train_monitor.memory.probe, "clear_cache", lambda device: 12_345_678)
    rows = len(window.parts.view.memory_plot.data)
    window.parts.run_control.clear_cache()
    assert len(window.parts.view.memory_plot.markers) == 1
    marker = window.parts.view.memory_plot.markers[0]
    assert marker.label.textItem.toPlainText() == "cleared 12.35 MB"
    assert len(window.parts.view.memory_plot.data) == rows + 1  # the sample right after the clear is plotted
    assert "cache cleared at rest: 12.35 MB freed" in log_text(window)


def test_clear_cache_during_a_run_is_applied_by_the_session(qtbot, window, monkeypatch):
    import gpu_train_monitor.engine.session

    monkeypatch.setattr(gpu_train_monitor.engine.session, "clear_cache", lambda device: 4096)
    start(qtbot, window, ENDLESS)
    window.parts.run_control.clear_cache()  # what Clear cache does during a run (its button is off on the CPU)
    assert "cache clear requested" in log_text(window)
    qtbot.waitUntil(lambda: len(window.parts.view.memory_plot.markers) == 1, timeout=RUN_TIMEOUT_MS)
    assert window.parts.view.memory_plot.markers[0].label.textItem.toPlainText() == "cleared 4.10 kB"
    assert "cache cleared at step" in log_text(window) and "4.10 kB freed" in log_text(window)
    assert window.state is WindowState.RUNNING  # the run goes on
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS):
        window.parts.run_control.stop()


def test_close_mid_run_stops_the_thread_and_saves_settings(qtbot, window, settings, running_qthreads):
    start(qtbot, window, ENDLESS)
    thread = window.controller._thread
    assert thread.isRunning()
    assert window.close()
    assert not window.controller.running
    assert thread.isFinished()
    assert running_qthreads() == []
    assert native_threads_named("training") == []
    saved = json.loads(settings.value("config"))
    assert saved["model"] == "tiny-cnn" and saved["epochs"] == ENDLESS.epochs


def test_close_waits_for_a_step_that_outlasts_the_bound(qtbot, window, monkeypatch, running_qthreads):
    import gpu_train_monitor.gui.window.main_window

    # as if the current step took longer than 5 s
    monkeypatch.setattr(gpu_train_monitor.gui.window.main_window, "CLOSE_WAIT_MS", 0)
    start(qtbot, window, ENDLESS)
    assert not window.close()  # not yet: the run's thread is still running
    assert window.isVisible()
    assert "waiting for the current step" in log_text(window)
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=RUN_TIMEOUT_MS)  # closed once the thread ended
    assert not window.controller.running
    assert running_qthreads() == []


def test_worker_exception_shows_an_error_and_returns_to_ready(qtbot, window, monkeypatch):
    import gpu_train_monitor.engine.session

    def broken_run(self):
        raise RuntimeError("simulated failure inside the session")

    monkeypatch.setattr(gpu_train_monitor.engine.session.TrainingSession, "run", broken_run)
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        qtbot.mouseClick(window.parts.buttons.start_button, Qt.MouseButton.LeftButton)
    assert ended.args == [WindowState.FAILED]
    assert window.state is WindowState.FAILED
    assert "ERROR: the run crashed: RuntimeError: simulated failure inside the session" in log_text(window)
    assert not window.controller.running
    assert window.parts.buttons.start_button.isEnabled()
    assert window.parts.form.widgets["batch_size"].isEnabled()

    monkeypatch.undo()  # and the next run works
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        qtbot.mouseClick(window.parts.buttons.start_button, Qt.MouseButton.LeftButton)
    assert ended.args == [WindowState.FINISHED]


def test_a_failed_run_from_bad_input_logs_the_reason_without_a_traceback(qtbot, window):
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        window.start_run(FAST.replace(batch_size=4096))  # larger than the 512 training images
    assert ended.args == [WindowState.FAILED]
    log = log_text(window)
    assert "failed: batch_size: 4096 is larger than the training set" in log
    assert "Traceback" not in log
    assert window.parts.buttons.start_button.isEnabled()


def test_settings_and_geometry_survive_a_restart(qtbot, make_window, tmp_path):
    path = str(tmp_path / "persist.ini")
    chosen = FAST.replace(
        lr=3e-4,
        batch_size=48,
        optimizer="adamw",
        placement="stream",
        seed=7,
        max_steps=123,
        amp="bf16",
        channels_last=True,
        weight_decay=0.01,
    )
    first = make_window(chosen, QSettings(path, QSettings.Format.IniFormat))
    first.resize(first.minimumSizeHint().width(), 700)
    first.parts.right_splitter.setSizes([300, 250, 100])
    qtbot.wait(50)
    splitter_sizes = first.parts.right_splitter.sizes()
    assert first.close()

    second = make_window(None, QSettings(path, QSettings.Format.IniFormat))
    assert second.parts.form.config() == chosen.replace(**OFF_ON_CPU)
    assert second.parts.form.values() == chosen.replace(**OFF_ON_CPU).to_dict()
    # the offscreen screen is 800 px wide, narrower than the window's minimum: Qt fits the width to the
    # screen on restore, so the height and the splitters are what can be compared here
    assert second.height() == 700
    assert second.parts.right_splitter.sizes() == splitter_sizes
    second.showMaximized()
    qtbot.waitUntil(second.isMaximized, timeout=2000)
    assert second.close()

    third = make_window(None, QSettings(path, QSettings.Format.IniFormat))
    assert third.isMaximized()


def test_unusable_saved_settings_fall_back_to_defaults(make_window, settings):
    settings.setValue("config", json.dumps({"batch_size": -5, "model": "tiny-cnn"}))
    window = make_window(None)
    assert window.parts.form.config() == RunConfig(**OFF_ON_CPU)  # auto is the CPU here
    assert "saved settings could not be used" in log_text(window)


def test_typing_an_unknown_model_disables_start_until_fixed(qtbot, window):
    combo = window.parts.form.widgets["model"]
    combo.lineEdit().selectAll()
    qtbot.keyClicks(combo.lineEdit(), "resnet-nope")
    assert not window.parts.buttons.start_button.isEnabled()
    assert "Model: unknown model 'resnet-nope'" in window.parts.buttons.start_button.toolTip()
    assert window.parts.form.message_label.isVisible()
    assert "unknown model" in window.parts.form.message_label.text()

    combo.lineEdit().selectAll()
    qtbot.keyClicks(combo.lineEdit(), "tiny-cnn")
    assert window.parts.buttons.start_button.isEnabled()
    assert not window.parts.form.message_label.isVisible()


def test_a_missing_data_folder_disables_start_until_fixed(qtbot, window, tmp_path):
    window.parts.form.set_config(FAST.replace(dataset="mnist", data_dir=str(tmp_path / "missing")))
    assert not window.parts.buttons.start_button.isEnabled()
    assert window.parts.form.message_label.isVisible()
    assert "Data folder: the folder" in window.parts.form.message_label.text()
    assert "does not exist" in window.parts.buttons.start_button.toolTip()

    (tmp_path / "missing").mkdir()
    window.parts.form.widgets["data_dir"].setText(str(tmp_path))  # an existing folder, typed in
    assert window.parts.buttons.start_button.isEnabled()
    assert not window.parts.form.message_label.isVisible()


def test_a_batch_larger_than_the_training_set_disables_start_before_the_run(qtbot, window):
    window.parts.form.set_config(FAST.replace(batch_size=FAST.synthetic_samples + 1))
    assert not window.parts.buttons.start_button.isEnabled()
    assert window.parts.buttons.start_button.toolTip() == (
        "Batch size: 513 is larger than the training set (512 images); use at most 512"
    )
    assert window.parts.form.message_label.isVisible()
    window.parts.form.set_batch_size(FAST.synthetic_samples)
    assert window.parts.buttons.start_button.isEnabled()


def test_a_data_folder_path_too_long_disables_start_with_the_reason(qtbot, window, tmp_path):
    window.parts.form.widgets["dataset"].setCurrentIndex(window.parts.form.widgets["dataset"].findData("mnist"))
    qtbot.keyClicks(window.parts.form.widgets["data_dir"], str(tmp_path / ("y" * 300)))  # a name over 255 bytes, typed
    assert not window.parts.buttons.start_button.isEnabled()
    assert "is 300 bytes long; file systems allow at most 255" in window.parts.buttons.start_button.toolTip()
    assert window.parts.form.message_label.isVisible()


def test_a_device_not_on_this_machine_disables_start_and_the_status_bar_says_so(qtbot, window):
    expected = "cuda:3 is not on this machine; it has cpu"
    window.parts.form.set_config(FAST.replace(device="cuda:3"))  # as the command line prefills it, torch loaded
    assert not window.parts.buttons.start_button.isEnabled()
    assert window.parts.buttons.start_button.toolTip().startswith(f"Device: {expected}")
    assert window.parts.device_watch.label.text().startswith(f"device: {expected}")
    assert window.probe is None  # nothing measured for a device that is not there
    window.parts.form.widgets["device"].setCurrentIndex(window.parts.form.widgets["device"].findData("cpu"))
    assert window.parts.buttons.start_button.isEnabled() and window.parts.device_watch.label.text() == "device: cpu"


def test_a_saved_device_not_on_this_machine_is_flagged_once_torch_has_loaded(qtbot, settings):
    settings.setValue("config", json.dumps(FAST.replace(device="cuda:3").to_dict()))
    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    assert window.parts.form.widgets["device"].currentText() == "cuda:3 (not found yet)"
    window.on_torch_ready()
    assert window.parts.form.value("device") == "cuda:3"  # kept, not silently replaced by another device
    assert window.parts.form.widgets["device"].currentText() == "cuda:3 (not on this machine)"
    assert not window.parts.buttons.start_button.isEnabled()
    assert "cuda:3 is not on this machine" in window.parts.device_watch.label.text()


def test_the_estimate_appears_after_one_run_and_matches_the_arithmetic(qtbot, window):
    from gpu_train_monitor.gui.form.estimate import NO_ESTIMATE, estimate_s, estimate_text, measurement_from

    label = window.parts.buttons.estimate_label
    assert label.isVisible() and label.text() == f"Estimated time: {NO_ESTIMATE}"
    events = EventRecorder()
    window.controller.event.connect(events.on_event)
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(window.parts.buttons.start_button, Qt.MouseButton.LeftButton)
    summary = events.of(RunFinished)[0].summary
    measured = measurement_from(summary, "cpu")
    assert measured is not None and measured.samples_per_s == summary.samples_per_s
    images = FAST.max_steps * FAST.batch_size
    assert label.text() == f"Estimated time: {estimate_text(estimate_s(measured, images), measured)}"
    assert f"from {summary.samples_per_s:,.0f} images/s measured on cpu" in label.text()

    window.parts.form.set_config(
        FAST.replace(max_steps=100 * FAST.max_steps)
    )  # the same speed settings, 100 times the images
    assert label.text() == f"Estimated time: {estimate_text(estimate_s(measured, 100 * images), measured)}"
    window.parts.form.set_batch_size(64)  # another batch size trains at another speed: no guess
    assert label.text() == f"Estimated time: {NO_ESTIMATE}"


def test_a_fast_path_the_device_cannot_run_disables_start_with_the_reason(qtbot, window):
    window.parts.form.set_config(FAST.replace(cudnn_benchmark=True))
    assert not window.parts.buttons.start_button.isEnabled() and not window.parts.buttons.compare_button.isEnabled()
    assert window.parts.buttons.start_button.toolTip().startswith(
        "cuDNN benchmark: cuDNN's autotuner runs on CUDA devices only, not on cpu"
    )
    assert window.parts.form.message_label.isVisible()
    window.parts.form.widgets["cudnn_benchmark"].setChecked(False)
    assert window.parts.buttons.start_button.isEnabled()
    assert not window.parts.form.widgets["cudnn_benchmark"].isEnabled()  # greyed out on the CPU, saying why
    assert "CUDA devices only" in window.parts.form.widgets["cudnn_benchmark"].toolTip()


def test_settings_saved_before_the_fast_paths_and_auto_still_load(make_window, settings):
    older = {k: v for k, v in FAST.to_dict().items() if k not in ("compile", "cudnn_benchmark", "fused_optimizer")}
    settings.setValue("config", json.dumps({**older, "model": "resnet18"}))
    window = make_window(None)
    assert window.parts.form.config() == FAST.replace(model="resnet18", **OFF_ON_CPU)  # new fields: their defaults
    assert "saved settings could not be used" not in log_text(window)


def test_the_default_model_says_what_auto_stands_for_here(make_window):
    window = make_window(RunConfig())
    from gpu_train_monitor.device.devices import resolve_device

    kind = resolve_device("auto").type
    expected = "tiny-cnn on this CPU" if kind == "cpu" else "resnet18 on this GPU"
    assert window.parts.form.widgets["model"].currentText() == f"auto ({expected})"
    assert window.parts.form.config().model == "auto" and window.parts.buttons.start_button.isEnabled()


def test_compare_is_off_for_more_than_one_process_and_says_why(window):
    assert window.parts.buttons.compare_button.isEnabled()
    window.parts.form.set_config(FAST.replace(nproc=2))
    assert window.parts.buttons.start_button.isEnabled()
    assert not window.parts.buttons.compare_button.isEnabled()
    assert (
        window.parts.buttons.compare_button.toolTip()
        == "A comparison races runs of one process each: set the process count to 1"
    )
    assert (
        window.start_comparison([{"amp": "off"}, {"channels_last": True}], "x")
        == window.parts.buttons.compare_button.toolTip()
    )
    assert not window.controller.running


def test_the_first_log_line_names_the_model_and_device_auto_stands_for(qtbot, window):
    """It read "starting: auto on auto": the window knows what auto resolves to on this machine."""
    config = FAST.replace(model="auto", device="auto")
    window.parts.form.set_config(config)
    with qtbot.waitSignal(window.run_ended, timeout=60_000):
        window.start_run(config)
    assert "starting: tiny-cnn on cpu, synthetic" in log_text(window)
    assert "auto on auto" not in log_text(window)


def test_ctrl_o_opens_the_selected_run(qtbot, window):
    from PySide6.QtGui import QKeySequence

    with qtbot.waitSignal(window.run_ended, timeout=60_000):
        window.start_run(FAST)
    window.parts.history.reveal()
    window.parts.history.refresh()
    window.parts.history.select(window.parts.history.proxy.run_id(0))
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    assert window.parts.history.open_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Open)
    qtbot.keyClick(window.parts.history.table, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: bool(window.parts.history.views), timeout=5000)
    for view in list(window.parts.history.views.values()):
        view.close()


def test_quit_says_the_run_is_stopping_and_is_greyed_out_meanwhile(qtbot, window):
    """Quit took seconds with nothing on screen: the status bar says why before the wait."""
    start(qtbot, window, ENDLESS)
    seen: list[tuple[str, bool]] = []
    shutdown = window.controller.shutdown

    def watched_shutdown(*args):
        seen.append((window.statusBar().currentMessage(), window.parts.menus.quit_action.isEnabled()))
        return shutdown(*args)

    window.controller.shutdown = watched_shutdown
    assert window.close()
    assert seen and seen[0] == ("stopping the run before closing…", False)
