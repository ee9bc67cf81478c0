"""The menu bar as a user drives it: File (Watch a script…, Open memory snapshot…, Save plots…, Quit), Run (the
buttons' actions and keys), Help."""

from __future__ import annotations

import importlib.metadata
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import torch
from PySide6 import QtCore
from PySide6.QtCore import QTimer
from PySide6.QtGui import QAction, QGuiApplication, QImage, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit, QMessageBox

from gpu_train_monitor.device.system_info import APP_NAME
from gpu_train_monitor.events.events import CheckpointSaved
from gpu_train_monitor.gui.views.window_state import WindowState
from gpu_train_monitor.gui.window.main_window import MainWindow
from gpu_train_monitor.gui.window.menu_bar import PLOTS_FOLDER_KEY, SNAPSHOT_FOLDER_KEY
from tests.support import snapshots
from tests.support.gui_support import ENDLESS, FAST, EventRecorder, native_threads_named

RUN_TIMEOUT_MS = 60_000


def entries(menu) -> list[str]:
    return [action.text() if not action.isSeparator() else "---" for action in menu.actions()]


def activate(qtbot, window: MainWindow) -> None:
    """Shortcuts reach the active window only."""
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)


def press(qtbot, window: MainWindow, sequence: QKeySequence) -> None:
    combination = sequence[0]
    qtbot.keyClick(window, combination.key(), combination.keyboardModifiers())


def run_to_the_end(qtbot, window: MainWindow) -> None:
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        window.parts.buttons.start_action.trigger()
    assert ended.args == [WindowState.FINISHED]


def test_the_menus_hold_file_run_and_help_actions(window):
    menus = window.parts.menus
    assert window.menuBar() is menus
    assert [action.text() for action in menus.actions()] == ["&File", "&Run", "&Settings", "&Help"]
    assert entries(menus.file_menu) == [
        "Connect to a machine…",
        "Disconnect",
        "---",
        "Watch a script…",
        "Open memory snapshot…",
        "Open run…",
        "Export run",
        "Resume from checkpoint…",
        "---",
        "Save plots…",
        "---",
        "&Quit",
    ]
    assert menus.file_menu.actions()[6].menu() is window.parts.history.edits.export_menu  # JSON, CSV, TensorBoard
    assert entries(menus.run_menu) == [
        "Start",
        "&Compare",
        "---",
        "Pause",
        "Stop",
        "Clear cache",
        "---",
        "Checkpoint now",
    ]
    assert entries(menus.help_menu) == ["&About GPU Training Monitor", "&Copy system info"]
    platform_quit = QKeySequence(QKeySequence.StandardKey.Quit)
    assert menus.quit_action.shortcut() == (platform_quit if not platform_quit.isEmpty() else QKeySequence("Ctrl+Q"))
    assert menus.run_menu.actions()[1].menu() is window.parts.compare_menu.menu  # the Compare button's own menu


def test_each_key_belongs_to_one_action_and_the_buttons_tooltips_name_it(window):
    keys = [action.shortcut().toString() for action in window.findChildren(QAction) if not action.shortcut().isEmpty()]
    assert len(keys) == len(set(keys)), keys  # a key on two actions would be ambiguous: Qt ignores it
    assert {"F5", "F6", "Shift+F5", "Ctrl+K"} <= set(keys)
    for button in (
        window.parts.buttons.start_button,
        window.parts.buttons.pause_button,
        window.parts.buttons.stop_button,
        window.parts.buttons.clear_button,
    ):
        assert button.shortcut().isEmpty()
    assert window.parts.buttons.start_button.toolTip() == "Start training (F5)"
    assert window.parts.buttons.start_action.toolTip() == window.parts.buttons.start_button.toolTip()


def test_more_file_actions_go_above_save_plots_in_a_section_of_their_own(window):
    opening, exporting = QAction("Open run…", window), QAction("Export…", window)
    window.parts.menus.add_file_actions(opening)
    window.parts.menus.add_file_actions(exporting)
    assert entries(window.parts.menus.file_menu) == [
        "Connect to a machine…",
        "Disconnect",
        "---",
        "Watch a script…",
        "Open memory snapshot…",
        "Open run…",
        "Export run",
        "Resume from checkpoint…",
        "Open run…",
        "Export…",
        "---",
        "Save plots…",
        "---",
        "&Quit",
    ]  # after the window's own


def test_run_actions_follow_the_state_and_do_what_the_buttons_do(qtbot, window):
    buttons = window.parts.buttons
    assert buttons.start_action.isEnabled() and window.parts.compare_menu.menu.menuAction().isEnabled()
    assert not buttons.pause_action.isEnabled() and not buttons.stop_action.isEnabled()
    assert not buttons.clear_action.isEnabled()  # the CPU has no cache
    assert "CPU has no caching allocator" in buttons.clear_action.toolTip()

    window.parts.form.set_config(ENDLESS)
    buttons.start_action.trigger()
    qtbot.waitUntil(lambda: window.state is WindowState.RUNNING, timeout=RUN_TIMEOUT_MS)
    for action, button in (
        (buttons.start_action, window.parts.buttons.start_button),
        (buttons.pause_action, window.parts.buttons.pause_button),
        (buttons.stop_action, window.parts.buttons.stop_button),
    ):
        assert action.isEnabled() == button.isEnabled()
    assert not buttons.start_action.isEnabled() and not window.parts.compare_menu.menu.menuAction().isEnabled()
    assert buttons.pause_action.isEnabled() and buttons.stop_action.isEnabled()

    buttons.pause_action.trigger()
    qtbot.waitUntil(lambda: window.state is WindowState.PAUSED, timeout=RUN_TIMEOUT_MS)
    assert buttons.pause_action.text() == "Resume" == window.parts.buttons.pause_button.text()
    buttons.pause_action.trigger()
    qtbot.waitUntil(lambda: window.state is WindowState.RUNNING, timeout=RUN_TIMEOUT_MS)
    assert buttons.pause_action.text() == "Pause"
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        buttons.stop_action.trigger()
    assert ended.args == [WindowState.STOPPED]
    assert buttons.start_action.isEnabled() and not buttons.stop_action.isEnabled()


def test_checkpoint_now_saves_one_while_a_single_run_trains(qtbot, window, tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_TRAIN_MONITOR_CHECKPOINTS", str(tmp_path))
    action = window.parts.menus.checkpoint_action
    assert not action.isEnabled() and "Only while a single run trains" in action.toolTip()
    events = EventRecorder()
    window.controller.event.connect(events.on_event)
    window.parts.form.set_config(ENDLESS)
    window.parts.buttons.start_action.trigger()
    qtbot.waitUntil(lambda: window.state is WindowState.RUNNING, timeout=RUN_TIMEOUT_MS)
    assert action.isEnabled()

    action.trigger()
    qtbot.waitUntil(lambda: any(e.reason == "request" for e in events.of(CheckpointSaved)), timeout=RUN_TIMEOUT_MS)
    saved = next(e for e in events.of(CheckpointSaved) if e.reason == "request")
    assert Path(saved.path).is_file() and Path(saved.path).is_relative_to(tmp_path)
    assert "checkpoint requested: saved at the next step boundary" in "\n".join(window.parts.view.log.lines())
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS):
        window.parts.buttons.stop_action.trigger()
    assert not action.isEnabled()


def test_start_is_disabled_in_the_menu_until_torch_has_loaded(qtbot, settings):
    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    assert not window.parts.buttons.start_action.isEnabled()
    assert window.parts.buttons.start_action.toolTip() == "PyTorch is still loading"
    window.on_torch_ready()
    assert window.parts.buttons.start_action.isEnabled()


def test_f5_starts_f6_pauses_and_resumes_shift_f5_stops(qtbot, window):
    window.parts.form.set_config(ENDLESS)
    activate(qtbot, window)
    press(qtbot, window, QKeySequence("F5"))
    qtbot.waitUntil(lambda: window.state is WindowState.RUNNING, timeout=RUN_TIMEOUT_MS)
    press(qtbot, window, QKeySequence("F6"))
    qtbot.waitUntil(lambda: window.state is WindowState.PAUSED, timeout=RUN_TIMEOUT_MS)
    press(qtbot, window, QKeySequence("F6"))
    qtbot.waitUntil(lambda: window.state is WindowState.RUNNING, timeout=RUN_TIMEOUT_MS)
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        press(qtbot, window, QKeySequence("Shift+F5"))
    assert ended.args == [WindowState.STOPPED]


def test_f5_runs_a_short_run_to_the_end(qtbot, window):
    activate(qtbot, window)
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        press(qtbot, window, QKeySequence("F5"))
    assert ended.args == [WindowState.FINISHED]
    assert len(window.parts.view.loss_plot.data) == FAST.max_steps


def test_the_quit_key_closes_the_window(qtbot, window):
    activate(qtbot, window)
    press(qtbot, window, window.parts.menus.quit_action.shortcut())
    assert not window.isVisible()


def test_the_quit_key_mid_run_stops_the_run_and_leaves_no_thread(qtbot, window, running_qthreads):
    window.parts.form.set_config(ENDLESS)
    window.parts.buttons.start_action.trigger()
    qtbot.waitUntil(lambda: window.state is WindowState.RUNNING, timeout=RUN_TIMEOUT_MS)
    thread = window.controller._thread
    activate(qtbot, window)
    press(qtbot, window, window.parts.menus.quit_action.shortcut())
    assert not window.isVisible()
    assert not window.controller.running and thread.isFinished()
    assert running_qthreads() == []
    assert native_threads_named("training") == []


def test_save_plots_writes_a_png_per_plot_that_loads(qtbot, window, tmp_path, settings):
    run_to_the_end(qtbot, window)
    written = window.parts.menus.save_plots(str(tmp_path / "run.png"), "png")
    assert [p.name for p in written] == ["run-loss.png", "run-validation.png", "run-memory.png"]
    for path in written:
        image = QImage(str(path))
        assert not image.isNull() and image.width() > 100 and image.height() > 50, path
    assert settings.value(PLOTS_FOLDER_KEY) == str(tmp_path)  # the next dialog opens there
    assert window.statusBar().currentMessage() == (
        f"saved 3 plots in {tmp_path}: run-loss.png, run-validation.png, run-memory.png"
    )
    assert list(tmp_path.glob(".*partial*")) == []  # written atomically: no temporary file left


def test_save_plots_writes_svg_documents_with_the_curves_and_titles(qtbot, window, tmp_path):
    run_to_the_end(qtbot, window)
    written = window.parts.menus.save_plots(str(tmp_path / "run"), "svg")
    assert [p.name for p in written] == ["run-loss.svg", "run-validation.svg", "run-memory.svg"]
    for path in written:
        root = ElementTree.parse(path).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg", path
        assert root.iter("{http://www.w3.org/2000/svg}path"), path
    loss = written[0].read_text(encoding="utf-8")
    assert "Training loss" in loss and "smoothed (EMA)" in loss  # text stays text, not pixels
    memory_title = window.parts.view.memory_plot.plot.getPlotItem().titleLabel.text  # names the CPU's RSS and capacity
    assert ElementTree.parse(written[2]).getroot().findtext("{http://www.w3.org/2000/svg}title") == memory_title
    assert 'clip-path="url(#' in loss  # a zoomed curve stops at the axes


def test_save_plots_with_the_comparison_in_front_saves_its_plots(qtbot, window, tmp_path):
    window.parts.plot_tabs.setCurrentWidget(window.parts.compare.view)
    qtbot.waitUntil(window.parts.compare.view.isVisible)
    written = window.parts.menus.save_plots(str(tmp_path / "race.png"), "png")
    assert [p.name for p in written] == [
        "race-comparison-time.png",
        "race-comparison-step.png",
        "race-comparison-speed.png",
        "race-memory.png",
    ]
    assert all(not QImage(str(p)).isNull() for p in written)


def test_save_plots_into_a_missing_folder_says_why_and_writes_nothing(window, tmp_path):
    target = tmp_path / "missing" / "run.png"
    assert window.parts.menus.save_plots(str(target), "png") == []
    assert not target.parent.exists()
    message = f"could not save the plots to {target}: the folder for {target.parent / 'run-loss.png'} does not exist"
    assert window.statusBar().currentMessage() == message
    assert window.parts.view.log.lines()[-1].endswith(f"ERROR: {message}")


def _answer_dialogs(qtbot, answers: list) -> None:
    """Answer the modal dialogs the action opens, in order: each answer is called with the dialog."""

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is None:
            QTimer.singleShot(20, answer)  # not open yet
            return
        answers.pop(0)(dialog)
        if answers:
            QTimer.singleShot(20, answer)

    QTimer.singleShot(20, answer)


def _choose(path: Path, name_filter: str):
    def choose(dialog: QFileDialog) -> None:
        assert isinstance(dialog, QFileDialog)
        dialog.selectNameFilter(name_filter)
        # typed, as a user does: selectFile leaves a line edit that has the focus as it is
        dialog.findChild(QLineEdit, "fileNameEdit").setText(str(path))
        dialog.accept()

    return choose


def _reply(button: QMessageBox.StandardButton, asked: list[str]):
    def reply(box: QMessageBox) -> None:
        assert isinstance(box, QMessageBox)
        asked.append(box.text())
        box.button(button).click()

    return reply


def test_the_save_dialogs_filter_picks_the_format_and_replacing_files_is_asked_first(qtbot, window, tmp_path):
    folder = tmp_path / "plots"
    folder.mkdir()
    window.settings.setValue(PLOTS_FOLDER_KEY, str(folder))
    _answer_dialogs(qtbot, [_choose(folder / "figure", "SVG image (*.svg)")])
    window.parts.menus.save_plots_action.trigger()
    written = sorted(p.name for p in folder.iterdir())
    assert written == ["figure-loss.svg", "figure-memory.svg"]  # no validation point before a run

    loss = folder / "figure-loss.svg"
    loss.write_text("kept")
    asked: list[str] = []
    _answer_dialogs(
        qtbot, [_choose(folder / "figure", "SVG image (*.svg)"), _reply(QMessageBox.StandardButton.No, asked)]
    )
    window.parts.menus.save_plots_action.trigger()
    assert asked == [f"figure-loss.svg, figure-memory.svg already exist in {folder}. Replace them?"]
    assert loss.read_text() == "kept"

    _answer_dialogs(
        qtbot, [_choose(folder / "figure", "SVG image (*.svg)"), _reply(QMessageBox.StandardButton.Yes, asked)]
    )
    window.parts.menus.save_plots_action.trigger()
    assert ElementTree.parse(loss).getroot().tag.endswith("svg")

    _answer_dialogs(qtbot, [_choose(folder / "figure", "PNG image (*.png)")])
    window.parts.menus.save_plots_action.trigger()
    assert not QImage(str(folder / "figure-loss.png")).isNull()


def test_copy_system_info_puts_the_versions_on_the_clipboard(window):
    window.parts.menus.copy_info_action.trigger()
    text = QGuiApplication.clipboard().text()
    lines = text.splitlines()
    assert lines[0].split() == ["GPU", "Training", "Monitor", importlib.metadata.version("gpu-train-monitor")]
    assert any(line.split() == ["torch", torch.__version__] for line in lines), text
    assert any(line.split() == ["Qt", QtCore.qVersion()] for line in lines), text
    assert any(line.startswith("NVIDIA driver ") for line in lines)
    assert window.statusBar().currentMessage().startswith("System info copied to the clipboard")


def test_about_shows_the_versions_without_blocking(qtbot, window):
    import pyqtgraph
    import PySide6

    window.parts.menus.about_action.trigger()
    box = window.parts.menus.about_box
    qtbot.waitUntil(box.isVisible)
    assert box.windowTitle() == f"About {APP_NAME}"
    text = box.text()
    for version in (
        importlib.metadata.version("gpu-train-monitor"),
        torch.__version__,
        QtCore.qVersion(),
        PySide6.__version__,
        pyqtgraph.__version__,
    ):
        assert version in text
    for name in ("CUDA", "cuDNN", "NVIDIA driver", "torchvision", "OS", "Python"):
        assert f"<b>{name}</b>" in text
    box.button(QMessageBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: not window.isHidden() and QApplication.activeModalWidget() is None)


def test_about_before_torch_has_loaded_does_not_wait_for_it(qtbot, settings):
    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    window.show()
    window.parts.menus.about_action.trigger()
    assert "<b>torch</b></td><td>not loaded yet" in window.parts.menus.about_box.text()
    window.parts.menus.about_box.close()


def test_the_save_dialogs_filters_name_the_format_each_writes():
    from gpu_train_monitor.gui.plots import plot_export

    assert plot_export.file_filters() == {"PNG image (*.png)": "png", "SVG image (*.svg)": "svg"}
    assert plot_export.format_for("/plots/run.svg", "png") == "svg"  # a suffix typed in the name wins
    assert plot_export.format_for("/plots/run", "svg") == "svg"  # else the filter chosen


def test_the_replace_question_names_one_file_or_several(window, tmp_path):
    one = window.parts.menus._replace_question([tmp_path / "run-loss.png"])
    assert one == f"run-loss.png already exists in {tmp_path}. Replace it?"
    two = window.parts.menus._replace_question([tmp_path / "run-loss.png", tmp_path / "run-memory.png"])
    assert two == f"run-loss.png, run-memory.png already exist in {tmp_path}. Replace them?"


def test_the_menu_bar_is_built_from_its_parts_without_a_window(qtbot, settings, tmp_path):
    from PySide6.QtWidgets import QMenu

    from gpu_train_monitor.gui.plots.loss_plot import LossPlot
    from gpu_train_monitor.gui.views.log_panel import LogPanel
    from gpu_train_monitor.gui.window.menu_bar import MenuBar

    log, plot, told, requests = LogPanel(), LossPlot(), [], []
    qtbot.addWidget(log)
    qtbot.addWidget(plot)
    run_actions = [QAction(text) for text in ("Start", "Pause", "Stop", "Clear cache")]
    menus = MenuBar(
        run_actions=run_actions,
        compare_menu=QMenu(),
        settings=settings,
        log=log,
        shown_plots=lambda: [("loss", plot.plot)],
        request_checkpoint=lambda: requests.append(1) or True,
        torch_loaded=lambda: False,
        notify=lambda text, ms: told.append(text),
    )
    qtbot.addWidget(menus)
    assert entries(menus.run_menu) == [
        "Start",
        "&Compare",
        "---",
        "Pause",
        "Stop",
        "Clear cache",
        "---",
        "Checkpoint now",
    ]
    menus.checkpoint_action.trigger()
    assert requests == [1] and log.lines()[-1].endswith("checkpoint requested: saved at the next step boundary")
    written = menus.save_plots(str(tmp_path / "run.png"), "png")
    assert [p.name for p in written] == ["run-loss.png"]  # what shown_plots names, nothing else
    assert settings.value(PLOTS_FOLDER_KEY) == str(tmp_path)
    assert told == [f"saved 1 plot in {tmp_path}: run-loss.png"]


def test_open_memory_snapshot_asks_for_a_file_and_shows_it_in_a_window_of_its_own(qtbot, window, tmp_path, settings):
    path = snapshots.write(tmp_path / "run.pickle", snapshots.training_like(200, frames_every=3))
    _answer_dialogs(qtbot, [_choose(path, "All files (*)")])
    window.parts.menus.open_snapshot_action.trigger()
    (opened,) = window.parts.menus.snapshot_windows
    qtbot.waitUntil(lambda: opened.reading is not None, timeout=10_000)
    assert opened.isVisible() and opened.reading.summary.events == 200
    assert settings.value(SNAPSHOT_FOLDER_KEY) == str(tmp_path)  # the next dialog opens there
    window.close()
    assert not opened.isVisible() and not opened.task.running
