"""Settings ▸ Language: English, 简体中文, or the system's language; remembered, applied at the next start.

Each language is named in itself (a reader finds their own whatever the window speaks). Choosing one
says, in the chosen language too, that it applies when the app starts again: texts are set when the
window is built, and rebuilding it would lose a run's plots.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings, Slot
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

from gui import i18n


class LanguageMenu(QMenu):
    """The language choices as radio items; `notice` is the last "applies after a restart" box shown."""

    def __init__(self, settings: QSettings, current: str, parent: QWidget) -> None:
        super().__init__(self.tr("&Language"), parent)
        self._settings = settings
        self._current = current  # the language the window speaks now
        self.notice: QMessageBox | None = None
        self.group = QActionGroup(self)
        self.group.setExclusive(True)
        system_name = i18n.NATIVE_NAMES[i18n.resolve(i18n.SYSTEM)]
        labels = {i18n.SYSTEM: self.tr("System language ({language})").format(language=system_name),
                  i18n.ENGLISH: i18n.NATIVE_NAMES[i18n.ENGLISH], i18n.CHINESE: i18n.NATIVE_NAMES[i18n.CHINESE]}
        self.choice_actions: dict[str, QAction] = {}
        saved = i18n.saved_choice(settings)
        for choice in i18n.CHOICES:
            action = QAction(labels[choice], self)
            action.setCheckable(True)
            action.setChecked(choice == saved)
            action.setData(choice)
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
        context, text = "LanguageMenu", "The window will be in {language} the next time GPU Training Monitor starts."
        lines = [self.tr("The window will be in {language} the next time GPU Training Monitor starts.")
                 .format(language=i18n.NATIVE_NAMES[language])]
        if language == self._current:
            lines = [self.tr("The window already speaks {language}.").format(language=i18n.NATIVE_NAMES[language])]
        elif language != i18n.ENGLISH or self._current != i18n.ENGLISH:
            in_new = i18n.translate_in(language, context, text).format(language=i18n.NATIVE_NAMES[language])
            if in_new != lines[0]:
                lines.append(in_new)  # said in the chosen language too: its reader may not read this one
        self.notice = QMessageBox(QMessageBox.Icon.Information, self.tr("Language"), "\n\n".join(lines),
                                  QMessageBox.StandardButton.Ok, self.parentWidget())
        self.notice.open()
