"""Settings ▸ Language: the choice is remembered and the user is told, in both languages, when it applies."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QWidget

from gui import i18n
from gui.language_menu import LanguageMenu


PARENTS: list[QWidget] = []  # a menu lives as long as its parent widget


def _menu(qtbot, settings: QSettings, current: str = i18n.ENGLISH) -> LanguageMenu:
    parent = QWidget()
    qtbot.addWidget(parent)
    PARENTS[:] = [parent]
    return LanguageMenu(settings, current, parent)


def test_the_system_language_is_checked_until_the_user_chooses(qtbot, settings):
    menu = _menu(qtbot, settings)
    assert [a.text() for a in menu.actions()][1:] == ["English", "简体中文"]
    assert menu.choice_actions[i18n.SYSTEM].isChecked()
    assert menu.actions()[0].text().startswith("System language (")


def test_choosing_chinese_is_remembered_and_said_in_both_languages(qtbot, settings, tmp_path):
    menu = _menu(qtbot, settings)
    menu.choice_actions[i18n.CHINESE].trigger()
    assert i18n.saved_choice(QSettings(settings.fileName(), QSettings.Format.IniFormat)) == i18n.CHINESE
    assert menu.choice_actions[i18n.CHINESE].isChecked() and not menu.choice_actions[i18n.SYSTEM].isChecked()
    text = menu.notice.text()
    assert "next time GPU Training Monitor starts" in text
    assert "简体中文" in text and "下次" in text  # the same sentence in Chinese, for a reader of Chinese only


def test_choosing_the_language_already_shown_says_so(qtbot, settings):
    menu = _menu(qtbot, settings, current=i18n.ENGLISH)
    menu.choice_actions[i18n.ENGLISH].trigger()
    assert menu.notice.text() == "The window already speaks English."
    assert i18n.saved_choice(settings) == i18n.ENGLISH
