"""With the Chinese catalogue installed, the dialogs and secondary surfaces a user reaches are Chinese too.

The window test (`test_window_in_chinese`) reads the window as it stands; this one opens what a user opens
from it: the Runs tab's rename, note and delete dialogs, File ▸ Resume from checkpoint (its file filter and
its epochs question), File ▸ Save plots (its filters and the replace question), the Compare menu and the
custom comparison dialog with an error in it, the run buttons' tooltips in each run state, the OOM banner
after a real out-of-memory and the batch-size finder after a search. Qt's static dialogs (getText,
question, getOpenFileName...) would block the test in their own event loop, so while it runs they are
replaced by the same dialog built from the same arguments and shown without a loop; what they say comes
from the code under test, unchanged.
"""

from __future__ import annotations

import re

import pytest
from PySide6.QtWidgets import QDialog, QInputDialog, QMessageBox, QWidget

from gpu_train_monitor.events.events import CheckpointSaved
from gpu_train_monitor.gui.qt import file_dialogs
from gpu_train_monitor.gui.views.window_state import WindowState
from tests.support.chinese_texts import RUN_TIMEOUT_MS, WORD_CHOICES, allowed_words, english_words, visible_texts
from tests.support.gui_support import FAST, EventRecorder

# their fixtures, found by pytest under these names: the Chinese catalogue installed, a real out of memory on
# the CPU (batches above 16 raise torch's OutOfMemoryError), the finder measuring without real trials

ONE_EPOCH = FAST.replace(synthetic_samples=256, batch_size=16, max_steps=None, epochs=1)  # 16 steps, a checkpoint


class StaticDialogs:
    """What Qt's blocking static dialogs were asked to show: each is built as Qt builds it and shown without
    its own event loop, then answered with Cancel."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.dialogs: list[QDialog] = []
        self.file_dialogs: list[tuple[str, str]] = []  # (caption, filter)
        self.open_answer = ""  # the file getOpenFileName "chooses"
        self.save_answer = ""  # the file getSaveFileName "chooses"
        monkeypatch.setattr(QInputDialog, "getText", staticmethod(self._get_text))
        monkeypatch.setattr(QInputDialog, "getMultiLineText", staticmethod(self._get_multi_line_text))
        monkeypatch.setattr(QInputDialog, "getInt", staticmethod(self._get_int))
        monkeypatch.setattr(QMessageBox, "question", staticmethod(self._question))
        monkeypatch.setattr(file_dialogs, "get_open_file_name", self._get_open_file_name)
        monkeypatch.setattr(file_dialogs, "get_save_file_name", self._get_save_file_name)

    def _shown(self, dialog: QDialog) -> None:
        dialog.show()
        self.dialogs.append(dialog)

    def _input(self, parent: QWidget, title: str, label: str) -> QInputDialog:
        dialog = QInputDialog(parent)
        dialog.setWindowTitle(title)
        dialog.setLabelText(label)
        return dialog

    def _get_text(self, parent, title, label, echo=None, text="", *args, **kwargs):
        dialog = self._input(parent, title, label)
        dialog.setTextValue(kwargs.get("text", text))
        self._shown(dialog)
        return "", False

    def _get_multi_line_text(self, parent, title, label, text="", *args, **kwargs):
        dialog = self._input(parent, title, label)
        dialog.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput)
        dialog.setTextValue(text)
        self._shown(dialog)
        return "", False

    def _get_int(self, parent, title, label, value=0, minimum=-2147483647, maximum=2147483647, *args, **kwargs):
        dialog = self._input(parent, title, label)
        dialog.setInputMode(QInputDialog.InputMode.IntInput)
        dialog.setIntRange(minimum, maximum)
        dialog.setIntValue(value)
        self._shown(dialog)
        return value, False

    def _question(
        self,
        parent,
        title,
        text,
        buttons=QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        default=QMessageBox.StandardButton.NoButton,
    ):
        box = QMessageBox(QMessageBox.Icon.Question, title, text, buttons, parent)
        box.setDefaultButton(default)
        self._shown(box)
        return QMessageBox.StandardButton.Cancel

    def _get_open_file_name(self, parent, caption="", folder="", filter="", *args, **kwargs):
        self.file_dialogs.append((caption, filter))
        return self.open_answer, ""

    def _get_save_file_name(self, parent, caption="", folder="", filter="", *args, **kwargs):
        self.file_dialogs.append((caption, filter))
        return self.save_answer, ""

    def take(self) -> list[QDialog]:
        """The dialogs shown since the last take, closed."""
        shown, self.dialogs = self.dialogs, []
        for dialog in shown:
            dialog.close()
        return shown


# identifiers these surfaces show besides the window's: the PyTorch mode torch.compile is raced against
# (Chinese PyTorch texts say "eager 模式" too), and the plots' names in the files Save plots writes
DIALOG_WORDS = {"eager", "loss", "memory", "validation", "rate"}


def _english(where: str, texts: list[tuple[str, str]]) -> list[str]:
    allowed = allowed_words() | DIALOG_WORDS | {"ctrl+k"}  # the Clear cache key, in its tooltip
    if where == "Custom comparison":  # typed as setting=value: its values are the identifiers (stream, auto)
        allowed |= WORD_CHOICES
    found = set()
    for what, text in texts:
        # what the user types stays as typed: examples in <code>, file patterns (*.pt)
        text = re.sub(r"<code>.*?</code>|\*\.\w+", " ", text or "")
        if words := english_words(text, allowed):
            found.add(f"{where}: {what}: {text!r} ({', '.join(words)})")
    return sorted(found)


def _action_texts(actions) -> list[tuple[str, str]]:
    return [
        (what, text)
        for action in actions
        for what, text in (
            ("action", action.text()),
            ("action tooltip", action.toolTip()),
            ("action status tip", action.statusTip()),
        )
    ]


def test_the_dialogs_a_user_opens_are_chinese(
    chinese, make_window, qtbot, monkeypatch, tmp_path, batches_above_16_run_out_of_memory, fast_trials
):
    static = StaticDialogs(monkeypatch)
    # a store of this test's own: the suite's shared one holds every earlier test's runs
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUNS_DB", str(tmp_path / "runs.sqlite3"))
    window = make_window(ONE_EPOCH)
    recorder = EventRecorder()
    window.controller.event.connect(recorder.on_event)
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        window.start_run(ONE_EPOCH)
    assert ended.args == [WindowState.FINISHED]
    english: list[str] = []

    # the OOM banner, after a real out of memory (batches above 16 raise torch's OutOfMemoryError)
    oom = FAST.replace(batch_size=32, on_oom="stop")
    window.parts.form.set_config(oom)
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT_MS) as ended:
        window.start_run(oom)
    assert ended.args == [WindowState.OOM] and window.parts.insight.oom_banner.isVisible()
    english += _english("OOM banner", visible_texts(window.parts.insight.oom_banner))

    # the Runs tab: rename, note, delete one run and delete both
    history = window.parts.history
    window.parts.tabs.setCurrentWidget(history)  # the list is read while it is shown
    history.refresh()
    assert [row.status for row in history.model.rows] == ["completed", "oom"]
    history.table.selectRow(0)
    english += _english(
        "Runs tab actions",
        _action_texts(
            [
                history.rename_action,
                history.note_action,
                history.delete_action,
                history.export_action,
                *history.edits.export_menu.actions(),
            ]
        ),
    )
    history.edits.rename_selected()
    history.edits.note_selected()
    history.edits.delete_selected()
    history.table.selectAll()
    history.edits.delete_selected()
    shown = static.take()
    assert len(shown) == 4
    for dialog in shown:
        english += _english(f"Runs tab dialog {dialog.windowTitle()!r}", visible_texts(dialog))
    assert history.model.rowCount() == 2  # every dialog was cancelled

    # File ▸ Resume from checkpoint: the file filter, then the epochs question for the run's checkpoint
    static.open_answer = recorder.of(CheckpointSaved)[-1].path  # the one the first run saved at its epoch's end
    window.parts.resumer.action.trigger()
    english += _english(
        "Resume from checkpoint", [("file dialog", text) for pair in static.file_dialogs for text in pair]
    )
    english += _english("Resume from checkpoint", _action_texts([window.parts.resumer.action]))
    shown = static.take()
    assert len(shown) == 1 and not window.controller.running
    english += _english("Resume from checkpoint", visible_texts(shown[0]))

    # File ▸ Save plots: the filters, then the question before replacing the files saved before
    static.file_dialogs.clear()
    static.save_answer = str(tmp_path / "plots" / "run")
    (tmp_path / "plots").mkdir()
    assert len(window.parts.menus.save_plots(static.save_answer, "png")) > 1
    window.parts.menus.save_plots_dialog()
    english += _english("Save plots", [("file dialog", text) for pair in static.file_dialogs for text in pair])
    shown = static.take()
    assert len(shown) == 1
    english += _english("Save plots", visible_texts(shown[0]))

    # the Compare menu and the custom comparison dialog, with a line that does not parse and too few lines
    window.parts.compare_menu.rebuild()
    english += _english("Compare menu", _action_texts(window.parts.compare_menu.menu.actions()))
    window.parts.compare_menu.open_custom()
    dialog = window.parts.compare_menu.dialog
    english += _english("Custom comparison", visible_texts(dialog))
    for typed in ("placement=nowhere\nplacement=resident", "placement=stream"):  # a bad value, too few lines
        dialog.editor.setPlainText(typed)
        assert dialog.error.isVisible()
        english += _english(
            "Custom comparison",
            [(what, text) for what, text in visible_texts(dialog) if not what.startswith("QPlainTextEdit")],
        )  # the typed lines
    dialog.hide()

    # the run buttons' tooltips in each state a run goes through (the window calls update_for)
    buttons = window.parts.buttons
    for state, running, searching, kind in (
        (WindowState.RUNNING, True, False, "cpu"),
        (WindowState.PAUSED, True, False, "cuda"),
        (WindowState.IDLE, False, True, "mps"),
        (WindowState.IDLE, False, False, "cpu"),
    ):
        buttons.update_for(state, running, True, None, searching, kind)
        english += _english(f"run buttons ({state.value})", visible_texts(buttons) + _action_texts(buttons.actions()))

    # the batch-size finder after a search
    fast_trials(100_000_000, 1_000_000)
    panel = window.parts.insight.finder_panel
    panel.capacity.setValue(1.0)
    with qtbot.waitSignal(panel.task.ended, timeout=RUN_TIMEOUT_MS):
        panel.find_button.click()
    assert panel.result is not None
    english += _english("finder", visible_texts(panel))

    assert not english, f"{len(english)} English texts:\n" + "\n".join(english)
