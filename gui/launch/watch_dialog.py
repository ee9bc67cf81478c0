"""File ▸ Watch a script…: the script to run (with a Browse button), its arguments as one line (split as a shell
would), the folder it runs in (its own by default) and an optional run name. Watch checks them and asks the
window to start the script (`start(request)`, which says why it could not, else None); a problem is a line in
red under the fields and the dialog stays open, never a traceback. The last fields typed are kept in the
window's settings, so the next time the same script is one click away. Connected to a machine (`remote_host`),
the script, its folder and Python are that machine's: the paths are typed as they are there (no Browse).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gpu_train_monitor.gui.launch.watch_command import WatchRequest
from gpu_train_monitor.gui.qt import file_dialogs, palette

SETTINGS_KEYS = {
    "script": "watch/script",
    "arguments": "watch/arguments",
    "folder": "watch/folder",
    "name": "watch/name",
}
FIELD_MIN_WIDTH = 420


class WatchDialog(QDialog):
    """The fields, the problem line and Watch / Cancel; accepted once `start` has started the script."""

    def __init__(
        self,
        start: Callable[[WatchRequest], str | None],
        settings: QSettings | None = None,
        parent: QWidget | None = None,
        remote_host: str | None = None,
    ) -> None:
        super().__init__(parent)
        self._start, self._settings, self.remote_host = start, settings, remote_host
        self.setWindowTitle(
            self.tr("Watch a script on {host}").format(host=remote_host) if remote_host else self.tr("Watch a script")
        )
        intro = QLabel(
            self.tr(
                "Runs a PyTorch training script of yours unchanged and follows it live here: its steps, losses "
                "and memory, recorded in the Runs tab. Stop, Pause and Clear cache act on it at its next "
                "optimizer step."
            )
        )
        intro.setWordWrap(True)
        self.script_edit = QLineEdit()
        self.script_edit.setPlaceholderText(self.tr("train.py"))
        self.arguments_edit = QLineEdit()
        self.arguments_edit.setPlaceholderText(self.tr("--epochs 3 --lr 0.01 (as in a terminal)"))
        self.folder_edit = QLineEdit()
        self.folder_edit.setPlaceholderText(self.tr("the script's folder"))
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText(self.tr("optional: the script's name"))
        for edit in (self.script_edit, self.arguments_edit, self.folder_edit, self.name_edit):
            edit.setMinimumWidth(FIELD_MIN_WIDTH)
        self.script_button = QPushButton(self.tr("Browse…"))
        self.script_button.clicked.connect(self.browse_script)
        self.folder_button = QPushButton(self.tr("Browse…"))
        self.folder_button.clicked.connect(self.browse_folder)
        for button in (self.script_button, self.folder_button):
            button.setVisible(remote_host is None)  # this machine's file dialog cannot show that machine's files
        if remote_host is not None:
            self.folder_edit.setPlaceholderText(self.tr("the home folder there"))
        form = QFormLayout()
        form.addRow(self.tr("Script:"), with_button(self.script_edit, self.script_button))
        form.addRow(self.tr("Arguments:"), self.arguments_edit)
        form.addRow(self.tr("Working folder:"), with_button(self.folder_edit, self.folder_button))
        form.addRow(self.tr("Run name:"), self.name_edit)
        self.command_label = QLabel()  # what will run, as a terminal would show it
        self.command_label.setWordWrap(True)
        self.command_label.setStyleSheet(f"color: {palette.QUIET}")
        self.problem_label = QLabel()
        self.problem_label.setWordWrap(True)
        self.problem_label.setStyleSheet(f"color: {palette.ERROR}")
        self.problem_label.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.watch_button = self.buttons.addButton(self.tr("Watch"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.watch_button.setDefault(True)
        self.buttons.accepted.connect(self.watch)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.command_label)
        layout.addWidget(self.problem_label)
        layout.addWidget(self.buttons)
        self._restore()
        for edit in (self.script_edit, self.arguments_edit, self.folder_edit):
            edit.textChanged.connect(self._show_command)
        for edit in self._edits().values():
            edit.textChanged.connect(self.problem_label.hide)  # a problem shown is about the fields as they were
        self._show_command()

    def request(self) -> WatchRequest:
        """The fields as typed."""
        return WatchRequest(
            self.script_edit.text(), self.arguments_edit.text(), self.folder_edit.text(), self.name_edit.text()
        )

    @property
    def problem(self) -> str:
        """The problem shown under the fields ("" when none is)."""
        return self.problem_label.text() if not self.problem_label.isHidden() else ""

    @Slot()
    def watch(self) -> None:
        """Check the fields, start the script; stay open with the problem shown when either fails."""
        request = self.request()
        problem = request.problem(remote=self.remote_host is not None) or self._start(request)
        if problem:
            self.problem_label.setText(problem)
            self.problem_label.show()
            return
        self.problem_label.hide()
        self._save()
        self.accept()

    @Slot()
    def browse_script(self) -> None:
        current = self.request().script_path if self.script_edit.text().strip() else Path.home()
        path, _ = file_dialogs.get_open_file_name(
            self,
            self.tr("The training script to watch"),
            str(current if current.is_dir() else current.parent),
            self.tr("Python scripts (*.py);;All files (*)"),
        )
        if path:
            self.script_edit.setText(path)

    @Slot()
    def browse_folder(self) -> None:
        folder = file_dialogs.get_existing_directory(
            self, self.tr("The folder the script runs in"), self.folder_edit.text() or str(Path.home())
        )
        if folder:
            self.folder_edit.setText(folder)

    @Slot()
    def _show_command(self) -> None:
        """'Runs python train.py --epochs 3 in /home/me/project', once there is a script to name."""
        request = self.request()
        if not request.script.strip():
            self.command_label.setText("")
            return
        try:
            arguments = shlex.join(request.argument_list())
        except ValueError:  # not yet a line a shell could split: said when Watch is pressed
            arguments = request.arguments.strip()
        command = " ".join(part for part in ("python", shlex.quote(request.script.strip()), arguments) if part)
        if self.remote_host is not None:
            folder = request.folder.strip() or self.tr("the home folder")
            text = self.tr("Runs {command} on {host} in {folder}").format(
                command=command, host=self.remote_host, folder=folder
            )
        else:
            text = self.tr("Runs {command} in {folder}").format(command=command, folder=request.working_folder)
        self.command_label.setText(text)

    def _restore(self) -> None:
        if self._settings is None:
            return
        edits = self._edits()
        for field, key in SETTINGS_KEYS.items():
            edits[field].setText(str(self._settings.value(key, "") or ""))

    def _save(self) -> None:
        if self._settings is None:
            return
        for field, edit in self._edits().items():
            self._settings.setValue(SETTINGS_KEYS[field], edit.text())

    def _edits(self) -> dict[str, QLineEdit]:
        return {
            "script": self.script_edit,
            "arguments": self.arguments_edit,
            "folder": self.folder_edit,
            "name": self.name_edit,
        }


def with_button(edit: QLineEdit, button: QPushButton) -> QWidget:
    """A field with its Browse button beside it."""
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(edit, 1)
    layout.addWidget(button)
    return row
