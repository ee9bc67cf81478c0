"""A script the window watches (File ▸ Watch a script…): what the user asked for, what is wrong with it (each
problem one sentence in the user's language, shown in the dialog, never a traceback), and the child's command
line (gpu_train_monitor.watch.command_line), started in the script's folder and followed through the store like a
data-parallel run (`gpu_train_monitor.gui.launch.launcher`); the script itself runs in a process of its own, with
its folder first on sys.path as usual. No widgets here.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QCoreApplication

from gpu_train_monitor.watch.command_line import watch_command_line


@dataclass(frozen=True)
class WatchRequest:
    """The dialog's fields as typed: `arguments` one line split as a shell would (shlex), `folder` empty for
    the script's own folder, `name` empty for the default run name."""

    script: str
    arguments: str = ""
    folder: str = ""
    name: str = ""

    @property
    def script_path(self) -> Path:
        return Path(self.script.strip()).expanduser()

    @property
    def working_folder(self) -> Path:
        """The folder the script runs in: the one asked for, else the script's own."""
        folder = self.folder.strip()
        if folder:
            return Path(folder).expanduser().resolve()
        return self.script_path.resolve().parent

    def argument_list(self) -> list[str]:
        """The arguments as the script will get them; ValueError for a line a shell could not split."""
        return shlex.split(self.arguments)

    def problem(self, remote: bool = False) -> str | None:
        """Why the script cannot be started as asked (one sentence), or None. `remote`: it runs on the machine
        connected to, whose files this one cannot check (the watch there says what is missing)."""
        translate = QCoreApplication.translate
        if not self.script.strip():
            return translate("watch_command", "Choose the script to watch.")
        if remote:
            return self._arguments_problem()
        script = self.script_path
        if not script.exists():
            return translate("watch_command", "There is no file {path}.").format(path=script)
        if not script.is_file():
            return translate("watch_command", "{path} is a folder, not a script.").format(path=script)
        problem = self._arguments_problem()
        if problem is not None:
            return problem
        folder = self.working_folder
        if not folder.is_dir():
            return translate("watch_command", "There is no folder {path} to run the script in.").format(path=folder)
        return None

    def _arguments_problem(self) -> str | None:
        translate = QCoreApplication.translate
        try:
            self.argument_list()
        except ValueError as exc:  # shlex says "No closing quotation" or "No escaped character"
            if "quotation" in str(exc):
                return translate("watch_command", "The arguments cannot be split: a quotation mark is not closed.")
            return translate("watch_command", "The arguments cannot be split: they end with a lone backslash.")
        return None

    def remote_command_line(self, store_path: Path) -> list[str]:
        """The child's command line for the script on the machine connected to, as typed there (its path and
        folder are that machine's); `gpu_train_monitor.gui.launch.remote_command.on_machine` puts the machine in."""
        folder = self.folder.strip()
        return watch_command_line(
            store_path,
            ["python", self.script.strip(), *self.argument_list()],
            self.name,
            [f"--remote-cwd={folder}"] if folder else [],
            safe_path=False,
        )

    def command_line(self, store_path: Path) -> list[str]:
        """The child's command line, recording into `store_path` (call once `problem()` is None)."""
        return watch_command_line(
            store_path, [sys.executable, str(self.script_path.resolve()), *self.argument_list()], self.name
        )
