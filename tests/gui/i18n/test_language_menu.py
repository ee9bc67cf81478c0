"""Settings ▸ Language: the choice is remembered and applies at once (the catalogue is installed now)."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QLocale, QSettings
from PySide6.QtWidgets import QWidget

from gpu_train_monitor.gui.i18n import language as i18n
from gpu_train_monitor.gui.i18n.language_menu import LanguageMenu

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


def test_choosing_chinese_is_remembered_and_applies_at_once(qtbot, settings, tmp_path, monkeypatch):
    monkeypatch.setattr(i18n, "cache_dir", lambda: tmp_path / "qm")
    menu = _menu(qtbot, settings)
    try:
        menu.choice_actions[i18n.CHINESE].trigger()
        assert i18n.saved_choice(QSettings(settings.fileName(), QSettings.Format.IniFormat)) == i18n.CHINESE
        assert menu.choice_actions[i18n.CHINESE].isChecked() and not menu.choice_actions[i18n.SYSTEM].isChecked()
        assert i18n.active() == i18n.CHINESE and menu.notice is None  # no "applies at the next start" box
        assert QLocale().language() == QLocale.Language.Chinese  # numbers follow at their next update
        assert QCoreApplication.translate("MenuBar", "&File") != "&File"
        assert "log" in menu.choice_actions[i18n.ENGLISH].statusTip()  # written lines keep their language
        menu.choice_actions[i18n.ENGLISH].trigger()
        assert i18n.active() == i18n.ENGLISH and QCoreApplication.translate("MenuBar", "&File") == "&File"
        assert QLocale().language() == QLocale.Language.English
    finally:
        i18n.install(i18n.ENGLISH)
        QLocale.setDefault(QLocale.c())


def test_choosing_the_language_already_shown_changes_nothing(qtbot, settings):
    menu = _menu(qtbot, settings, current=i18n.ENGLISH)
    menu.choice_actions[i18n.ENGLISH].trigger()
    assert menu.notice is None and i18n.active() == i18n.ENGLISH
    assert i18n.saved_choice(settings) == i18n.ENGLISH
