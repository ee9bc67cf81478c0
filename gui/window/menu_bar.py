"""The window's menu bar: File (Watch a script…, Open memory snapshot…, Save plots…, Quit), Run (the run buttons'
actions, Checkpoint now), Settings (Language) and Help (About, Copy system info).

The Run menu holds the very actions the buttons trigger (`gpu_train_monitor.gui.run.buttons`), so they are enabled,
renamed (Pause/Resume) and keyed together, with no second shortcut to make a key ambiguous; its Compare
submenu is the Compare button's own menu. Quit closes the window through its closeEvent, which stops a
run under way first. More File actions (opening a run, exporting) go above Save plots through
`add_file_actions`.

Save plots saves the plots the window shows (its `shown_plots`), one file per plot
(`gpu_train_monitor.gui.plots.plot_export`). The menu bar is given the parts it acts on, not the window: it reaches
nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QSettings, Slot
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu, QMenuBar, QMessageBox, QWidget

from gpu_train_monitor.base.text import message_of
from gpu_train_monitor.gui.i18n import language as i18n
from gpu_train_monitor.gui.i18n.language_menu import LanguageMenu
from gpu_train_monitor.gui.launch.watch_command import WatchRequest
from gpu_train_monitor.gui.launch.watch_dialog import WatchDialog
from gpu_train_monitor.gui.memory.snapshot_window import SnapshotWindow
from gpu_train_monitor.gui.plots import plot_export
from gpu_train_monitor.gui.qt import file_dialogs
from gpu_train_monitor.gui.qt.core_text import core_text
from gpu_train_monitor.gui.qt.locale_format import integer
from gpu_train_monitor.gui.views.log_panel import LogPanel
from gpu_train_monitor.gui.views.window_state import WindowState
from gpu_train_monitor.gui.window.about import open_about, window_system_info

PLOTS_FOLDER_KEY = "plots/folder"  # where the last plots were saved: the next dialog opens there
SNAPSHOT_FOLDER_KEY = "snapshots/folder"  # where the last memory snapshot was opened from
STATUS_MESSAGE_MS = 8000


def quit_keys() -> QKeySequence:
    """The platform's Quit key (Ctrl+Q on Linux desktops, Cmd+Q on macOS), or Ctrl+Q where the platform
    names none (Windows, where Alt+F4 closes the window too; Qt's offscreen platform)."""
    keys = QKeySequence(QKeySequence.StandardKey.Quit)
    return QKeySequence("Ctrl+Q") if keys.isEmpty() else keys


class MenuBar(QMenuBar):
    """File, Run, Settings and Help of the window it is put in; `about_box` is the About box last opened (None
    before).

    `run_actions`: Start, then the actions after the Compare submenu (Pause, Stop, Clear cache). `compare_menu`:
    the Compare button's menu. `settings`: where the language and the plots' folder are kept. `log`: where
    saving and checkpoint requests are told. `shown_plots()`: (file-name part, plot) for each plot shown now.
    `request_checkpoint()`: True when a checkpoint was requested. `torch_loaded()`: whether About may ask torch.
    `notify(text, ms)`: a message in the status bar."""

    def __init__(
        self,
        *,
        run_actions: Sequence[QAction],
        compare_menu: QMenu,
        settings: QSettings,
        log: LogPanel,
        shown_plots: Callable[[], list[tuple[str, pg.PlotWidget]]],
        request_checkpoint: Callable[[], bool],
        torch_loaded: Callable[[], bool],
        notify: Callable[[str, int], None],
        watch_script: Callable[[WatchRequest], str | None] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._settings, self._log, self._notify = settings, log, notify
        self._shown_plots, self._request_checkpoint, self._torch_loaded = shown_plots, request_checkpoint, torch_loaded
        self._watch_script = watch_script
        self.about_box: QMessageBox | None = None
        self.watch_dialog: WatchDialog | None = None  # the last Watch a script… dialog opened
        self.remote_host: Callable[[], str | None] = lambda: None  # where a watched script runs (None: here)

        self.file_menu = self.addMenu(self.tr("&File"))
        self.watch_action = self._add(
            self.file_menu,
            self.tr("Watch a script…"),
            self.open_watch_dialog,
            self.tr("Run a training script of yours unchanged and follow it live, as a run of the window's own"),
        )
        self.watch_action.setVisible(watch_script is not None)
        self.open_snapshot_action = self._add(
            self.file_menu,
            self.tr("Open memory snapshot…"),
            self.open_snapshot_dialog,
            self.tr(
                "Show a CUDA memory snapshot (torch.cuda.memory._dump_snapshot) from any machine: its timeline"
                " and the largest allocations at its peak"
            ),
        )
        self.snapshot_windows: list[SnapshotWindow] = []  # the snapshots opened, each in a window of its own
        self.save_plots_action = self._add(
            self.file_menu,
            self.tr("Save plots…"),
            self.save_plots_dialog,
            self.tr("Save the plots shown as PNG or SVG images, one file per plot"),
        )
        self.file_menu.addSeparator()
        self.quit_action = self._add(
            self.file_menu,
            self.tr("&Quit"),
            self._close_window,
            self.tr("Close the window (a run under way is stopped first)"),
        )
        self.quit_action.setShortcut(quit_keys())
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        self._file_section_end: QAction | None = None  # the separator under actions added above Save plots

        start_action, *control_actions = run_actions
        self.run_menu = self.addMenu(self.tr("&Run"))
        self.run_menu.setToolTipsVisible(True)  # a disabled item's tooltip says why, as its button's does
        self.run_menu.addAction(start_action)
        self.compare_menu = compare_menu
        self.compare_menu.setTitle(self.tr("&Compare"))
        self.run_menu.addMenu(self.compare_menu)
        self.run_menu.addSeparator()
        for action in control_actions:
            self.run_menu.addAction(action)
        self.run_menu.addSeparator()
        self.checkpoint_action = self._add(
            self.run_menu,
            self.tr("Checkpoint now"),
            self.checkpoint_now,
            self.tr("Save the model, optimizer and progress at the next step boundary"),
        )

        self.settings_menu = self.addMenu(self.tr("&Settings"))
        self.language_menu = LanguageMenu(settings, i18n.active(), self)
        self.settings_menu.addMenu(self.language_menu)

        self.help_menu = self.addMenu(self.tr("&Help"))
        self.about_action = self._add(
            self.help_menu,
            self.tr("&About GPU Training Monitor"),
            self.show_about,
            self.tr("The versions of the app, PyTorch, CUDA, the driver and Qt"),
        )
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        self.copy_info_action = self._add(
            self.help_menu,
            self.tr("&Copy system info"),
            self.copy_system_info,
            self.tr("Put the versions on the clipboard, for a bug report"),
        )

    def _add(self, menu: QMenu, text: str, slot: object, status_tip: str) -> QAction:
        action = menu.addAction(text)
        action.setStatusTip(status_tip)
        action.triggered.connect(slot)
        return action

    @Slot()
    def _close_window(self) -> None:
        self.window().close()  # through its closeEvent, which stops a run first

    def add_connection_actions(self, *actions: QAction) -> None:
        """Put `actions` (Connect to a machine…, Disconnect) first in the File menu, a section of their own."""
        first = self.file_menu.actions()[0]
        for action in actions:
            self.file_menu.insertAction(first, action)
        self.file_menu.insertSeparator(first)

    def add_file_actions(self, *actions: QAction) -> None:
        """Put `actions` in the File menu above Save plots, in order, as a section of their own."""
        if self._file_section_end is None:
            self._file_section_end = self.file_menu.insertSeparator(self.save_plots_action)
        for action in actions:
            self.file_menu.insertAction(self._file_section_end, action)

    def update_for(self, state: WindowState, can_checkpoint: bool) -> None:
        """Enable what applies now (the Run menu's other items follow the buttons, `gpu_train_monitor.gui.run.buttons`).
        `can_checkpoint`: a single run is under way (a comparison's runs save no checkpoints)."""
        enabled = can_checkpoint and state.can_pause  # once it trains, paused too; not while stopping
        self.checkpoint_action.setEnabled(enabled)
        self.checkpoint_action.setToolTip(
            self.tr("Save the model, optimizer and progress at the next step boundary, to resume the run from later")
            if enabled
            else self.tr("Only while a single run trains (a comparison's runs save no checkpoints)")
        )

    # ---- File ------------------------------------------------------------------------------------
    @Slot()
    def open_watch_dialog(self) -> None:
        """The script, its arguments, folder and run name; Watch starts it (`watch_script`) and closes it."""
        if self._watch_script is None:
            return
        self.watch_dialog = WatchDialog(self._watch_script, self._settings, self.window(), self.remote_host() or None)
        self.watch_dialog.open()  # window-modal; the window goes on drawing

    @Slot()
    def open_snapshot_dialog(self) -> None:
        """Ask for a snapshot file (a dialog that never opens the files it lists) and show it."""
        folder = str(self._settings.value(SNAPSHOT_FOLDER_KEY, "") or Path.home())
        path, _ = file_dialogs.get_open_file_name(
            self.window(),
            self.tr("Open memory snapshot"),
            folder,
            self.tr("Memory snapshots (*.pickle *.pkl *.pt);;All files (*)"),
        )
        if path:
            self._settings.setValue(SNAPSHOT_FOLDER_KEY, str(Path(path).parent))
            self.open_snapshot(path)

    def open_snapshot(self, path: str) -> SnapshotWindow:
        """Show the snapshot at `path` in a window of its own, read in the background."""
        self.snapshot_windows = [w for w in self.snapshot_windows if w.isVisible() or w.task.running]
        window = SnapshotWindow(self.window())
        self.snapshot_windows.append(window)
        window.show()
        window.open_file(path)
        return window

    def close_snapshots(self) -> None:
        """Close every snapshot window (each waits for its reading to end: no running thread is destroyed)."""
        for window in self.snapshot_windows:
            window.close()
        self.snapshot_windows.clear()

    @Slot()
    def save_plots_dialog(self) -> None:
        """Ask for a file name and a format, confirm replacing files, save (see `save_plots`)."""
        folder = str(self._settings.value(PLOTS_FOLDER_KEY, "") or Path.home())
        filters = plot_export.file_filters()
        path, name_filter = file_dialogs.get_save_file_name(
            self.window(),
            self.tr("Save plots (one file per plot: NAME-loss, NAME-memory…)"),
            str(Path(folder) / "plots"),
            ";;".join(filters),
            options=QFileDialog.Option.DontConfirmOverwrite,
        )
        if not path:
            return
        fmt = plot_export.format_for(path, filters.get(name_filter, "png"))
        plots = self._shown_plots()
        existing = [p for p in plot_export.target_paths(path, [name for name, _ in plots], fmt) if p.exists()]
        if (
            existing
            and QMessageBox.question(self.window(), self.tr("Replace files?"), self._replace_question(existing))
            != QMessageBox.StandardButton.Yes
        ):
            return
        self.save_plots(path, fmt)

    def _replace_question(self, existing: list[Path]) -> str:
        names, folder = ", ".join(p.name for p in existing), str(existing[0].parent)
        if len(existing) == 1:
            return self.tr("{name} already exists in {folder}. Replace it?").format(name=names, folder=folder)
        return self.tr("{names} already exist in {folder}. Replace them?").format(names=names, folder=folder)

    def save_plots(self, path: str, fmt: str) -> list[Path]:
        """Save the plots shown as `fmt` ('png' or 'svg') beside `path`; say where in the status bar and the
        log, or why not. Returns the files written."""
        plots = self._shown_plots()
        if not plots:
            self._notify(self.tr("no plot is shown to save: open the plots' splitter"), STATUS_MESSAGE_MS)
            return []
        try:
            written = plot_export.save_plots(plots, path, fmt)
        except OSError as exc:
            reason = core_text(exc.strerror) if exc.strerror else core_text(message_of(exc))
            text = self.tr("could not save the plots to {path}: {reason}").format(path=path, reason=reason)
            self._log.add(text, "error")
            self._notify(text, STATUS_MESSAGE_MS)
            return []
        self._settings.setValue(PLOTS_FOLDER_KEY, str(written[0].parent))
        folder, names = str(written[0].parent), ", ".join(p.name for p in written)
        text = (
            self.tr("saved 1 plot in {folder}: {names}").format(folder=folder, names=names)
            if len(written) == 1
            else self.tr("saved {count} plots in {folder}: {names}").format(
                count=integer(len(written)), folder=folder, names=names
            )
        )
        self._log.add(text)
        self._notify(text, STATUS_MESSAGE_MS)
        return written

    # ---- Run -------------------------------------------------------------------------------------
    @Slot()
    def checkpoint_now(self) -> None:
        if self._request_checkpoint():  # its CheckpointSaved (or a warning) is logged
            self._log.add(self.tr("checkpoint requested: saved at the next step boundary"))

    # ---- Help ------------------------------------------------------------------------------------
    @Slot()
    def show_about(self) -> None:
        self.about_box = open_about(self.window(), window_system_info(self._torch_loaded()))

    @Slot()
    def copy_system_info(self) -> None:
        QGuiApplication.clipboard().setText(window_system_info(self._torch_loaded()).text())
        self._notify(self.tr("System info copied to the clipboard: paste it into a bug report"), STATUS_MESSAGE_MS)
