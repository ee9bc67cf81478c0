"""File ▸ Watch a script…'s dialog: bad input is one line in red under the fields and the dialog stays open (no
script, a file or folder that is not there, arguments a shell could not split, the window refusing to start);
good input starts `python -m gpu_train_monitor watch -- python <script> <args>` in the script's folder and is
remembered."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from gpu_train_monitor.gui.launch.watch_command import WatchRequest
from gpu_train_monitor.gui.launch.watch_dialog import WatchDialog


@pytest.fixture
def script(tmp_path) -> Path:
    path = tmp_path / "project" / "train.py"
    path.parent.mkdir()
    path.write_text("print('training')\n", encoding="utf-8")
    return path


@pytest.fixture
def started() -> list[WatchRequest]:
    return []


@pytest.fixture
def dialog(qtbot, settings, started):
    def start(request: WatchRequest) -> str | None:
        started.append(request)
        return None

    dialog = WatchDialog(start, settings)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def press_watch(qtbot, dialog: WatchDialog) -> None:
    qtbot.mouseClick(dialog.watch_button, Qt.MouseButton.LeftButton)


def test_no_script_chosen_is_said_in_the_dialog_which_stays_open(qtbot, dialog, started):
    press_watch(qtbot, dialog)
    assert dialog.problem == "Choose the script to watch."
    assert dialog.problem_label.isVisible() and dialog.isVisible() and started == []
    dialog.script_edit.setText("t")  # typing: the line was about the fields as they were
    assert dialog.problem == ""


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"script": "{tmp}/missing.py"}, "There is no file {tmp}/missing.py."),
        ({"script": "{tmp}"}, "{tmp} is a folder, not a script."),
        ({"arguments": "--note 'unclosed"}, "The arguments cannot be split: a quotation mark is not closed."),
        ({"arguments": "--note \\"}, "The arguments cannot be split: they end with a lone backslash."),
        ({"folder": "{tmp}/nowhere"}, "There is no folder {tmp}/nowhere to run the script in."),
    ],
)
def test_a_problem_with_the_fields_is_one_line_and_nothing_starts(qtbot, dialog, started, script, fields, problem):
    tmp = str(script.parent.parent)
    dialog.script_edit.setText(str(script))
    edits = {"script": dialog.script_edit, "arguments": dialog.arguments_edit, "folder": dialog.folder_edit}
    for field, text in fields.items():
        edits[field].setText(text.format(tmp=tmp))
    press_watch(qtbot, dialog)
    assert dialog.problem == problem.format(tmp=tmp)
    assert dialog.isVisible() and started == []


def test_the_window_refusing_to_start_is_said_in_the_dialog(qtbot, settings, script):
    dialog = WatchDialog(lambda request: "a run or a batch-size search is under way", settings)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.script_edit.setText(str(script))
    press_watch(qtbot, dialog)
    assert dialog.problem == "a run or a batch-size search is under way" and dialog.isVisible()


def test_a_script_starts_under_watch_in_its_own_folder_and_its_fields_are_remembered(
    qtbot, dialog, started, script, settings, tmp_path
):
    dialog.script_edit.setText(str(script))
    dialog.arguments_edit.setText("--epochs 3 --note 'two words'")
    dialog.name_edit.setText("my run")
    assert dialog.command_label.text() == (
        f"Runs python {script} --epochs 3 --note 'two words' in {script.parent}"
    )  # what will run, before it does
    press_watch(qtbot, dialog)
    assert dialog.problem == "" and not dialog.isVisible()
    (request,) = started
    assert request.working_folder == script.parent  # the folder left empty: the script's own
    store = tmp_path / "runs.sqlite3"
    args = request.command_line(store)
    module = args.index("-m") + 1
    assert args[0] == sys.executable and args[module : module + 2] == ["gpu_train_monitor", "watch"]
    assert f"--runs-db={store}" in args and "--name=my run" in args
    assert args[args.index("--") + 1 :] == [sys.executable, str(script), "--epochs", "3", "--note", "two words"]

    again = WatchDialog(lambda request: None, settings)  # the next time: the same script, one click away
    qtbot.addWidget(again)
    assert again.request() == request


def test_the_run_name_is_left_out_when_empty(script, tmp_path):
    args = WatchRequest(str(script)).command_line(tmp_path / "runs.sqlite3")
    assert not any(arg.startswith("--name") for arg in args)
    assert args[args.index("--") + 1 :] == [sys.executable, str(script)]
