"""The window's file dialogs never open a file, so browsing the run store's folder cannot drop SQLite's locks.

A dialog that opened and closed the store's `-wal` or `-shm` dropped every POSIX lock this process held on
them; the next other process to close the store then took itself for the last user, deleted the `-wal` and
`-shm` the window still had mapped, and from then on the window saw no new run and lost its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit

from gpu_train_monitor.gui.qt import file_dialogs
from tests.support.gui_support import FAST
from tests.support.run_store_support import ROOT, cli_output, start_cli_run

RUN_TIMEOUT_MS = 120_000


def _browse_then_cancel(folder: Path, typed: list[Path], seen: list[str]) -> None:
    """Answer the next modal file dialog as a curious user: open `folder`, look at it as a list and in detail,
    type each path of `typed` (the completer lists what matches), then Cancel."""
    steps = [
        lambda d: d.setDirectory(str(folder)),
        lambda d: d.setViewMode(QFileDialog.ViewMode.Detail),
        *[lambda d, p=p: d.findChild(QLineEdit, "fileNameEdit").setText(str(p)) for p in typed],
        lambda d: d.setViewMode(QFileDialog.ViewMode.List),
        lambda d: d.reject(),
    ]

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QFileDialog):
            QTimer.singleShot(20, answer)  # not open yet
            return
        if not seen or seen[-1] != dialog.windowTitle():
            seen.append(dialog.windowTitle())
        steps.pop(0)(dialog)
        if steps:
            QTimer.singleShot(150, answer)  # time for the model's gatherer and the completer to look

    QTimer.singleShot(20, answer)


def _runs_listed(db: Path) -> list[dict]:
    """`runs list --json` in a fresh process: the runs another program reading the store sees."""
    result = subprocess.run(
        [sys.executable, "-m", "gpu_train_monitor", "runs", "list", "--json", "--runs-db", str(db)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_name_only_icons_answer_from_the_name(qtbot, tmp_path):
    from PySide6.QtCore import QFileInfo

    provider = file_dialogs.NameOnlyIconProvider()
    (tmp_path / "run.db-wal").write_bytes(b"\0" * 32)
    assert provider.type(QFileInfo(str(tmp_path / "run.db-wal"))) == "DB-WAL file"
    assert provider.type(QFileInfo(str(tmp_path))) == "Folder"
    assert not provider.icon(QFileInfo(str(tmp_path / "run.db-wal"))).isNull()


def test_browsing_the_store_folder_in_every_dialog_keeps_the_store_shared(qtbot, settings, tmp_path):
    from gpu_train_monitor.gui.window.main_window import MainWindow

    folder = tmp_path / "store"
    folder.mkdir()
    db = folder / "runs.db"  # a suffix several MIME types claim: Qt's default provider opened even this file
    window = MainWindow(settings=settings, runs_db=str(db))
    qtbot.addWidget(window)
    window.on_torch_ready()
    window.parts.form.set_config(FAST.replace(max_steps=None, epochs=10_000, report_interval=0.05))
    window.show()
    window.parts.tabs.setCurrentWidget(window.parts.history)  # the Runs tab, which re-reads the store while shown
    window.start_run(window.parts.form.config())
    qtbot.waitUntil(lambda: window.parts.history.model.rowCount() == 1, timeout=RUN_TIMEOUT_MS)  # recording
    wal = Path(f"{db}-wal")
    assert wal.exists()

    # every dialog of the window, browsed through the store's folder while the run records
    store_files = [db, wal, Path(f"{db}-shm")]
    seen: list[str] = []
    window.parts.history.select(window.parts.history.model.rowCount() and window.parts.history.proxy.run_id(0))
    dialogs = [
        window.parts.resumer._on_triggered,
        window.parts.menus.save_plots_dialog,
        window.parts.insight._on_save_snapshot,
        lambda: window.parts.history.edits.export_selected("json"),
        lambda: window.parts.history.edits.export_selected("csv"),
        window.parts.form._on_browse_data_dir,
    ]
    for open_dialog in dialogs:
        _browse_then_cancel(folder, store_files, seen)
        open_dialog()
    assert len(seen) == len(dialogs), seen
    window.parts.buttons.stop_button.click()
    qtbot.waitUntil(lambda: not window.controller.running, timeout=RUN_TIMEOUT_MS)

    # another process records a run and closes the store: it must not take itself for the last user
    terminal = start_cli_run(db, max_steps=4)
    assert terminal.wait(180) == 0, cli_output(db)
    assert wal.exists(), "the window's -wal was deleted under it"
    qtbot.waitUntil(lambda: window.parts.history.model.rowCount() == 2, timeout=RUN_TIMEOUT_MS)

    # the window's own next run is in the store, as a fresh process reads it
    window.start_run(FAST)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=RUN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: window.parts.history.model.rowCount() == 3, timeout=RUN_TIMEOUT_MS)
    listed = _runs_listed(db)
    assert len(listed) == 3 and listed[0]["status"] == "completed", listed  # newest first
