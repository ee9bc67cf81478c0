"""Compare mode in the window, as a user drives it: the Compare menu, the race, Stop/Pause, closing."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from gpu_train_monitor.compare.events import ComparisonFinished, ComparisonStarted
from gpu_train_monitor.compare.plan import DEFAULT_STEPS
from gpu_train_monitor.compare.result import ratio_text
from gpu_train_monitor.events.events import CacheCleared, ContenderEvent, RunFinished, StepsReported
from gpu_train_monitor.gui.views.window_state import WindowState
from gpu_train_monitor.gui.window.main_window import MainWindow
from tests.support.gui_support import FAST, EventRecorder, native_threads_named

RUN_TIMEOUT_MS = 120_000
COMPARE = FAST.replace(synthetic_samples=256)  # tiny-cnn on the CPU, batch 32, 6 steps a run
LONG = COMPARE.replace(max_steps=100_000)  # a comparison that has to be stopped
TWO_PLACEMENTS = [{"placement": "stream"}, {"placement": "resident"}]


def log_text(window: MainWindow) -> str:
    return "\n".join(window.parts.view.log.lines())


def menu_entries(window: MainWindow) -> list[str]:
    window.parts.compare_menu.rebuild()  # what opening the menu does (aboutToShow)
    return [action.text() for action in window.parts.compare_menu.menu.actions()]


def curve_len(curve) -> int:
    x, _ = curve.getData()
    return 0 if x is None else len(x)


def start_long(qtbot, window: MainWindow) -> None:
    """Start a comparison that runs until stopped; wait until its first run trains."""
    window.parts.form.set_config(LONG)
    assert window.start_comparison(TWO_PLACEMENTS, "placements") is None
    qtbot.waitUntil(
        lambda: window.state is WindowState.RUNNING and len(window.parts.view.loss_plot.data) > 0,
        timeout=RUN_TIMEOUT_MS,
    )


def test_a_ready_made_comparison_races_two_cpu_runs_to_a_headline(qtbot, window):
    events = EventRecorder()
    window.controller.event.connect(events.on_event)
    window.parts.form.set_config(COMPARE)
    entries = menu_entries(window)
    assert entries[0] == f"Each run trains {COMPARE.max_steps} steps, one run after another"
    action = next(a for a in window.parts.compare_menu.menu.actions() if a.text() == "stream vs resident")
    assert f"{COMPARE.max_steps} steps each" in action.toolTip()

    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        action.trigger()  # one click
        assert window.state is WindowState.STARTING
        assert window.parts.plot_tabs.currentWidget() is window.parts.compare.view  # the race shows without a click
        assert not window.parts.buttons.start_button.isEnabled() and not window.parts.buttons.compare_button.isEnabled()
        assert not window.parts.form.widgets["batch_size"].isEnabled()
    assert ended.args == [WindowState.FINISHED]

    assert isinstance(events.events[0], ComparisonStarted) and isinstance(events.events[-1], ComparisonFinished)
    result = events.events[-1].result
    assert result is window.parts.compare.result and result.status == "completed"
    finished = [e.event for e in events.of(ContenderEvent) if isinstance(e.event, RunFinished)]
    assert [f.status for f in finished] == ["completed", "completed"]
    rates = [f.summary.samples_per_s for f in finished]

    view = window.parts.compare.view
    qtbot.waitUntil(
        lambda: (
            len(view.bar_heights()) == 2
            and all(curve_len(c) == COMPARE.max_steps for c in view.time_curves + view.step_curves)
        ),
        timeout=5000,
    )
    assert len(view.time_curves) == 2 and len(view.step_curves) == 2  # one curve per run in each plot
    legend = [label.text for _, label in view.time_plot.getPlotItem().legend.items]
    assert legend == ["1. stream", "2. resident"]
    assert view.bar_heights() == pytest.approx(rates)
    assert view.headline.text() == result.headline
    ratio = ratio_text(max(rates) / min(rates))  # the headline's ratio is the runs', a winner only beyond the noise
    assert (f"{ratio} faster" if result.clear_difference else f"{ratio} is within the noise") in result.headline
    assert result.speedup == pytest.approx(max(rates) / min(rates))
    assert f"{COMPARE.max_steps} steps each" in view.header.text()
    lines = view.run_lines()
    assert lines[0].startswith("1. stream: completed") and lines[1].startswith("2. resident: completed")
    # each run's time axis starts at its own start: the second run is not drawn after the first one's time
    second_x, _ = view.time_curves[1].getData()
    assert 0 < second_x[0] < second_x[-1] <= result.runs[1].wall_s
    # the usual live views followed the run under way, reset at its start
    assert len(window.parts.view.loss_plot.data) == COMPARE.max_steps
    assert window.parts.view.stats.values["step"].text() == f"{COMPARE.max_steps} / {COMPARE.max_steps}"
    log = log_text(window)
    assert "run 1 of 2: stream" in log and "run 2 of 2: resident" in log
    assert f"comparison completed: {result.headline}" in log
    assert window.parts.buttons.start_button.isEnabled() and window.parts.buttons.compare_button.isEnabled()


def test_stop_pause_and_clear_cache_reach_the_run_under_way(qtbot, window, monkeypatch):
    import gpu_train_monitor.engine.session

    monkeypatch.setattr(gpu_train_monitor.engine.session, "clear_cache", lambda device: 4096)
    events = EventRecorder()
    window.controller.event.connect(events.on_event)
    start_long(qtbot, window)
    assert window.parts.buttons.pause_button.isEnabled() and window.parts.buttons.stop_button.isEnabled()

    qtbot.mouseClick(window.parts.buttons.pause_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.state is WindowState.PAUSED, timeout=RUN_TIMEOUT_MS)
    window.parts.run_control.clear_cache()  # what Clear cache does during a run (its button is off on the CPU)
    qtbot.waitUntil(
        lambda: any(isinstance(e.event, CacheCleared) for e in events.of(ContenderEvent)), timeout=RUN_TIMEOUT_MS
    )
    qtbot.mouseClick(window.parts.buttons.pause_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.state is WindowState.RUNNING, timeout=RUN_TIMEOUT_MS)

    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        qtbot.mouseClick(window.parts.buttons.stop_button, Qt.MouseButton.LeftButton)
        assert window.state is WindowState.STOPPING
    assert ended.args == [WindowState.STOPPED]
    result = window.parts.compare.result
    assert result.status == "stopped" and [r.status for r in result.runs] == ["stopped"]  # the 2nd never ran
    window.parts.compare.view.draw_now()
    assert window.parts.compare.view.headline.text() == result.headline and result.headline.startswith("no ratio")
    lines = window.parts.compare.view.run_lines()
    assert lines[0] == "1. stream: stopped: stopped by request"
    assert lines[1] == "2. resident: not run: the comparison stopped before its turn"
    assert not window.controller.running
    assert (
        window.parts.buttons.start_button.isEnabled() and window.parts.buttons.compare_button.isEnabled()
    )  # ready again
    assert window.parts.form.widgets["batch_size"].isEnabled()

    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:  # and a single run works after
        window.parts.form.set_config(FAST)
        qtbot.mouseClick(window.parts.buttons.start_button, Qt.MouseButton.LeftButton)
        assert window.parts.plot_tabs.currentWidget() is window.parts.view.loss_plot
    assert ended.args == [WindowState.FINISHED]


def test_closing_mid_comparison_stops_it(qtbot, window, running_qthreads):
    start_long(qtbot, window)
    thread = window.controller._thread
    assert window.close()
    assert thread.isFinished() and not window.controller.running
    assert running_qthreads() == [] and native_threads_named("training") == []


def test_the_menu_offers_what_applies_on_this_machine(window):
    import torch

    if torch.cuda.is_available() or torch.backends.mps.is_available():
        pytest.skip("this machine has a GPU: the CPU-only menu is checked where there is none")
    entries = menu_entries(window)
    assert "stream vs resident" in entries
    assert "CPU vs GPU" not in entries and "AMP off vs bf16" not in entries
    assert ("compiled vs eager" in entries) == (window.parts.form.devices.problem("cpu", "compile") is None)
    assert "expandable segments off vs on" not in entries  # CUDA only: listed greyed out, saying what it needs
    absent = next(a for a in window.parts.compare_menu.menu.actions() if a.text().startswith("expandable segments"))
    assert absent.text() == "expandable segments off vs on (needs a CUDA GPU)" and not absent.isEnabled()
    assert absent.toolTip() == (
        "Expandable segments are a setting of CUDA's caching allocator, and this machine has no CUDA GPU"
    )
    assert entries[-1] == "Custom comparison…"
    window.parts.form.set_config(COMPARE.replace(max_steps=None))
    assert menu_entries(window)[0] == f"Each run trains {DEFAULT_STEPS} steps, one run after another"


def test_a_custom_override_that_does_not_parse_is_named_inline_and_starts_nothing(qtbot, window):
    window.parts.compare_menu.open_custom()
    dialog = window.parts.compare_menu.dialog
    assert dialog.isVisible() and f"{COMPARE.max_steps} steps each" in dialog.intro.text()
    qtbot.keyClicks(dialog.editor, "placement=stream")  # typed, line by line
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Return)
    qtbot.keyClicks(dialog.editor, "batch=64")
    assert dialog.error.isVisible()
    assert dialog.error.text().startswith("line 2: 'batch=64': unknown setting 'batch'")
    assert not dialog.run_button.isEnabled()
    dialog._on_run()  # even a click that got through starts nothing
    assert not window.controller.running and window.state is WindowState.IDLE

    dialog.editor.setPlainText("placement=stream")
    assert dialog.error.text() == "write 2 to 4 lines, one run each (this has 1)"
    dialog.editor.setPlainText("placement=stream\nplacement = stream")
    assert "configurations 1 and 2 are the same run" in dialog.error.text()


def test_a_custom_comparison_this_machine_cannot_run_says_why_in_its_dialog(qtbot, window):
    window.parts.compare_menu.open_custom()
    dialog = window.parts.compare_menu.dialog
    dialog.editor.setPlainText("device=cpu\ndevice=cuda:7")
    assert dialog.run_button.isEnabled()  # it parses; only this machine can tell
    qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    assert not window.controller.running and window.state is WindowState.IDLE
    assert dialog.isVisible() and dialog.error.text().startswith("configuration 2 (cuda:7): --device:")
    assert "the comparison could not start: configuration 2 (cuda:7)" in log_text(window)


def test_one_process_races_two_and_the_headline_states_the_scaling(qtbot, window):
    """The data-parallel side runs as 2 gloo processes under torch's launcher; its events reach the race."""
    import os

    if (os.cpu_count() or 1) < 2:
        pytest.skip("one CPU core: no second process to race")
    events = EventRecorder()
    window.controller.event.connect(events.on_event)
    window.parts.form.set_config(COMPARE.replace(batch_size=64, max_steps=8))
    assert "1 vs 2 CPU processes" in menu_entries(window)
    action = next(a for a in window.parts.compare_menu.menu.actions() if a.text() == "1 vs 2 CPU processes")
    with qtbot.waitSignal(window.run_ended, timeout=240_000):
        action.trigger()
    result = window.parts.compare.result
    assert [r.status for r in result.runs] == ["completed", "completed"], result.headline
    assert set(result.scaling_efficiency) == {1}
    assert f"scaling efficiency nproc=2 {result.scaling_efficiency[1]:.0%}" in window.parts.compare.view.headline.text()
    reports = [e.event for e in events.of(ContenderEvent) if isinstance(e.event, StepsReported) and e.index == 1]
    assert reports and all(len(r.ranks) == 2 for r in reports)  # rank 0 relays both ranks' samples


def test_ctrl_enter_runs_the_custom_comparison_and_enter_is_a_new_line(qtbot, window):
    window.parts.compare_menu.open_custom()
    dialog = window.parts.compare_menu.dialog
    qtbot.waitUntil(dialog.isActiveWindow)
    qtbot.keyClicks(dialog.editor, "device=cpu")
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Return)  # a new line, nothing sent
    assert dialog.editor.toPlainText() == "device=cpu\n"
    qtbot.keyClicks(dialog.editor, "device=cuda:7")
    with qtbot.waitSignal(dialog.requested, timeout=2000) as sent:
        qtbot.keyClick(dialog.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert sent.args[0] == [{"device": "cpu"}, {"device": "cuda:7"}]
    assert dialog.error.text().startswith("configuration 2 (cuda:7): --device:")  # this machine's answer, inline
