"""Settings ▸ Language: English, 简体中文, or the system's language; remembered, and applied at once.

Each language is named in itself (a reader finds their own whatever the window speaks). Choosing one
installs its catalogue now (`i18n.switch`): every window says its texts again
(`gpu_train_monitor.gui.window.retranslate`), and numbers follow the new locale at their next update. The log's lines
already written keep their language (they are its history); new ones come in the new language, as the choices' status
tip says.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings, Slot
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

from gpu_train_monitor.gui.i18n import language as i18n


class LanguageMenu(QMenu):
    """The language choices as radio items; `notice` is the last box shown (a catalogue that failed to load)."""

    def __init__(self, settings: QSettings, current: str, parent: QWidget) -> None:
        super().__init__(self.tr("&Language"), parent)
        self._settings = settings
        self._current = current  # the language the window spoke when built (i18n.active() is the one now)
        self.notice: QMessageBox | None = None
        self.group = QActionGroup(self)
        self.group.setExclusive(True)
        system_name = i18n.NATIVE_NAMES[i18n.resolve(i18n.SYSTEM)]
        labels = {
            i18n.SYSTEM: self.tr("System language ({language})").format(language=system_name),
            i18n.ENGLISH: i18n.NATIVE_NAMES[i18n.ENGLISH],
            i18n.CHINESE: i18n.NATIVE_NAMES[i18n.CHINESE],
        }
        self.choice_actions: dict[str, QAction] = {}
        saved = i18n.saved_choice(settings)
        for choice in i18n.CHOICES:
            action = QAction(labels[choice], self)
            action.setCheckable(True)
            action.setChecked(choice == saved)
            action.setData(choice)
            action.setStatusTip(
                self.tr(
                    "Switch the window to this language now: lines already in the log stay "
                    "as they were written, new lines come in this language"
                )
            )
            self.group.addAction(action)
            self.addAction(action)
            self.choice_actions[choice] = action
        self.group.triggered.connect(self._on_chosen)

    @Slot(QAction)
    def _on_chosen(self, action: QAction) -> None:
        choice = action.data()
        i18n.save_choice(self._settings, choice)
        self._settings.sync()
        language = i18n.resolve(choice)
        if language == i18n.active():
            return
        installed = i18n.switch(language)
        if installed.problem:  # the catalogue did not load: the window stays English, and says why
            self.notice = QMessageBox(
                QMessageBox.Icon.Warning,
                self.tr("Language"),
                self.tr("The window stays in English: {problem}").format(problem=installed.problem),
                QMessageBox.StandardButton.Ok,
                self.parentWidget(),
            )
            self.notice.open()
