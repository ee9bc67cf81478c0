"""A language change while the window is open (a translator installed or removed, Settings ▸ Language) says
the menus, the tabs, the settings form and every panel again in the new language; the config the form holds
is unchanged, and the log's lines written before stay as they were."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import QLocale
from PySide6.QtWidgets import QGroupBox, QPlainTextEdit

from gpu_train_monitor.gui.i18n import language as i18n
from gpu_train_monitor.gui.views.window_state import WindowState
from tests.support.gui_support import FAST


def _texts(window) -> dict[str, str]:
    form = window.parts.form
    return {
        "File menu": window.parts.menus.file_menu.title(),
        "Quit": window.parts.menus.quit_action.text(),
        "Language menu": window.parts.menus.language_menu.title(),
        "Log tab": window.parts.tabs.tabText(window.parts.tabs.indexOf(window.parts.view.log)),
        "memory tab": window.parts.tabs.tabText(window.parts.tabs.indexOf(window.parts.view.breakdown_view)),
        "step time tab": window.parts.tabs.tabText(window.parts.tabs.indexOf(window.parts.view.step_time)),
        "step time axis": window.parts.view.step_time.plot.getPlotItem().getAxis("left").labelText,
        "loss tab": window.parts.plot_tabs.tabText(window.parts.plot_tabs.indexOf(window.parts.view.loss_plot)),
        "batch size": form.labels["batch_size"].text(),
        "processes": form.labels["nproc"].text(),
        "groups": ", ".join(box.title() for box in form.findChildren(QGroupBox)),
        "batch size tip": form.widgets["batch_size"].toolTip(),
        "off": form.widgets["amp"].itemText(0),
        "pin_memory tip": form.widgets["pin_memory"].toolTip(),
    }


@pytest.fixture
def system_locale():
    yield
    QLocale.setDefault(QLocale.c())


def test_menus_tabs_and_the_form_follow_a_language_change_while_open(make_window, qtbot, tmp_path, system_locale):
    window = make_window()
    english = _texts(window)
    assert (english["File menu"], english["batch size"], english["off"]) == ("&File", "Batch size", "off")
    config = window.parts.form.config()
    installed = i18n.install(i18n.CHINESE, cache=tmp_path / "qm", system=QLocale("zh_CN"))
    assert installed.language == i18n.CHINESE, installed.problem
    try:
        qtbot.waitUntil(lambda: window.parts.form.labels["batch_size"].text() == "批大小")  # LanguageChange is posted
        chinese = _texts(window)
        assert chinese["off"] == "关闭" and chinese["File menu"] != "&File" and "训练" in chinese["groups"]
        unchanged = {name for name in english if chinese[name] == english[name]}
        assert unchanged <= {"memory tab"}, {name: chinese[name] for name in unchanged}  # its text is new
        assert window.parts.form.config() == config  # the words changed, not the values
    finally:
        installed.remove()
        QLocale.setDefault(QLocale.c())  # back to English numbers too, as installing English does
    qtbot.waitUntil(lambda: window.parts.form.labels["batch_size"].text() == "Batch size")
    assert _texts(window) == english


def _log_lines(window) -> set[str]:
    return {line for log in window.findChildren(QPlainTextEdit) for line in log.toPlainText().splitlines()}


def _cjk(text: str) -> bool:
    return any("\u3000" <= c <= "\u9fff" or "\uff00" <= c <= "\uffef" for c in text)


def test_the_whole_window_follows_the_language_menu_after_a_run(
    make_window, qtbot, tmp_path, monkeypatch, system_locale
):
    """Settings ▸ Language switches every text a user sees at once, after a run filled the plots, the Runs
    tab and the numbers; the log's lines written before stay as they were written (its history)."""
    from tests.support.chinese_texts import RUN_TIMEOUT_MS, allowed_words, english_words, machine_names, visible_texts

    monkeypatch.setattr(i18n, "cache_dir", lambda: tmp_path / "qm")
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUNS_DB", str(tmp_path / "runs.sqlite3"))
    window = make_window()
    window.start_run(FAST)
    qtbot.waitUntil(lambda: window.state is WindowState.FINISHED, timeout=RUN_TIMEOUT_MS)
    window.parts.history.refresh()
    qtbot.waitUntil(lambda: window.parts.history.model.rowCount() > 0, timeout=RUN_TIMEOUT_MS)
    stored = window.parts.history.open_run(window.parts.history.model.rows[-1].id)  # a stored run's own window, open
    qtbot.addWidget(stored)
    qtbot.waitUntil(lambda: "\n" in stored.findChild(QPlainTextEdit).toPlainText(), timeout=RUN_TIMEOUT_MS)
    written, log = _log_lines(window) | _log_lines(stored), window.parts.view.log.lines()
    config = window.parts.form.config()
    allowed, machine = allowed_words(), machine_names()
    menu = window.parts.menus.language_menu
    try:
        menu.choice_actions[i18n.CHINESE].trigger()
        qtbot.waitUntil(lambda: window.parts.form.labels["batch_size"].text() == "批大小")
        assert window.parts.view.log.lines()[: len(log)] == log  # the log's history stays as it was written
        assert window.parts.form.config() == config
        english = sorted(
            {
                f"{where}: {text!r} ({', '.join(words)})"
                for where, text in visible_texts(window) + visible_texts(stored)
                if text not in written and (words := english_words(text, allowed, machine))
            }
        )
        assert not english, f"{len(english)} English texts after switching to Chinese:\n" + "\n".join(english)
        assert i18n.active() == i18n.CHINESE and QLocale().language() == QLocale.Language.Chinese
        written = _log_lines(window) | _log_lines(stored)
        menu.choice_actions[i18n.ENGLISH].trigger()
        qtbot.waitUntil(lambda: window.parts.form.labels["batch_size"].text() == "Batch size")
        chinese = sorted(
            {
                f"{where}: {text!r}"
                for where, text in visible_texts(window) + visible_texts(stored)
                if text not in written and _cjk(text) and "简体中文" not in text
            }
        )
        assert not chinese, f"{len(chinese)} Chinese texts after switching back to English:\n" + "\n".join(chinese)
        assert i18n.active() == i18n.ENGLISH and window.parts.form.config() == config
    finally:
        i18n.install(i18n.ENGLISH)


def test_auto_model_is_said_in_each_language_and_stays_auto(make_window, qtbot, tmp_path, monkeypatch, system_locale):
    """The model combo shows auto with what it stands for; a switch says it anew and the config keeps auto."""
    monkeypatch.setattr(i18n, "cache_dir", lambda: tmp_path / "qm")
    window = make_window(dataclasses.replace(FAST, model="auto"))
    combo, menu = window.parts.form.widgets["model"], window.parts.menus.language_menu
    assert combo.currentText().startswith("auto (")
    try:
        menu.choice_actions[i18n.CHINESE].trigger()
        qtbot.waitUntil(lambda: window.parts.form.labels["batch_size"].text() == "批大小")
        assert combo.currentText().startswith("自动") and window.parts.form.config().model == "auto"
        menu.choice_actions[i18n.ENGLISH].trigger()
        qtbot.waitUntil(lambda: window.parts.form.labels["batch_size"].text() == "Batch size")
        assert combo.currentText().startswith("auto (") and window.parts.form.config().model == "auto"
        assert not any(_cjk(combo.itemText(index)) for index in range(combo.count()))
    finally:
        i18n.install(i18n.ENGLISH)
