"""A language change while the window is open (a translator installed or removed) says the menus, the tabs
and the settings form again in the new language; the config the form holds is unchanged."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QLocale
from PySide6.QtWidgets import QGroupBox

from gui import i18n


def _texts(window) -> dict[str, str]:
    form = window.form
    return {"File menu": window.menus.file_menu.title(), "Quit": window.menus.quit_action.text(),
            "Language menu": window.menus.language_menu.title(),
            "Log tab": window.tabs.tabText(window.tabs.indexOf(window.log)),
            "memory tab": window.tabs.tabText(window.tabs.indexOf(window.breakdown_view)),
            "loss tab": window.plot_tabs.tabText(window.plot_tabs.indexOf(window.loss_plot)),
            "batch size": form.labels["batch_size"].text(), "processes": form.labels["nproc"].text(),
            "groups": ", ".join(box.title() for box in form.findChildren(QGroupBox)),
            "batch size tip": form.widgets["batch_size"].toolTip(), "off": form.widgets["amp"].itemText(0),
            "pin_memory tip": form.widgets["pin_memory"].toolTip()}


@pytest.fixture
def system_locale():
    yield
    QLocale.setDefault(QLocale.c())


def test_menus_tabs_and_the_form_follow_a_language_change_while_open(make_window, qtbot, tmp_path, system_locale):
    window = make_window()
    english = _texts(window)
    assert (english["File menu"], english["batch size"], english["off"]) == ("&File", "Batch size", "off")
    config = window.form.config()
    installed = i18n.install(i18n.CHINESE, cache=tmp_path / "qm", system=QLocale("zh_CN"))
    assert installed.language == i18n.CHINESE, installed.problem
    try:
        qtbot.waitUntil(lambda: window.form.labels["batch_size"].text() == "批大小")  # LanguageChange is posted
        chinese = _texts(window)
        assert chinese["off"] == "关闭" and chinese["File menu"] != "&File" and "训练" in chinese["groups"]
        unchanged = {name for name in english if chinese[name] == english[name]}
        assert unchanged <= {"memory tab"}, {name: chinese[name] for name in unchanged}  # its text is new
        assert window.form.config() == config  # the words changed, not the values
    finally:
        installed.remove()
        QLocale.setDefault(QLocale.c())  # back to English numbers too, as installing English does
    qtbot.waitUntil(lambda: window.form.labels["batch_size"].text() == "Batch size")
    assert _texts(window) == english
