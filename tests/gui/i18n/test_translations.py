"""The Chinese translation is complete and in step with the code, and the language choice works.

`pyside6-lupdate` is run on a copy of the committed `.ts`: a text added to the code without a translation
shows up there as unfinished and fails the test with the text named, as does a translation left
unfinished. Run `python -m gpu_train_monitor.gui.i18n.translation_files` and translate what it added.
"""

from __future__ import annotations

import ast
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QLocale, QSettings

from gpu_train_monitor.gui.i18n import language as i18n
from gpu_train_monitor.gui.i18n.translation_files import LANGUAGES, compiled, lupdate, source_files, ts_name
from gpu_train_monitor.gui.qt.resources import asset

FIELD = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(?:![rsa])?(?::[^{}]*)?\}")
TAG = re.compile(
    r"</?(?:b|i|u|s|p|a|br|hr|tt|em|li|ul|ol|td|tr|th|pre|div|sub|sup|code|span|font|nobr|small|table|"
    r"strong|big|h[1-6])\b[^>]*>"
)  # HTML; "<class name>" in a path pattern is text


def _messages(ts: Path) -> list[tuple[str, str, ET.Element]]:
    root = ET.parse(ts).getroot()
    return [
        (context.findtext("name") or "", message.findtext("source") or "", message.find("translation"))
        for context in root.iter("context")
        for message in context.iter("message")
    ]


@pytest.fixture(scope="module", params=LANGUAGES)
def updated_ts(request, tmp_path_factory) -> tuple[Path, Path]:
    """(the committed .ts, a copy brought in step with the code by lupdate)."""
    committed = asset("translations") / ts_name(request.param)
    copy = tmp_path_factory.mktemp("ts") / committed.name
    shutil.copy(committed, copy)
    lupdate(copy)
    return committed, copy


def test_every_text_of_the_code_is_translated(updated_ts):
    committed, updated = updated_ts
    unfinished = [
        f"[{context}] {source!r}"
        for context, source, translation in _messages(updated)
        if translation.get("type") == "unfinished" or not (translation.text or "").strip()
    ]
    assert not unfinished, (
        f"{len(unfinished)} texts have no translation in {committed.name} (run "
        "`python -m gpu_train_monitor.gui.i18n.translation_files`, then translate them):\n" + "\n".join(unfinished)
    )


def test_the_committed_source_has_no_stale_texts(updated_ts):
    committed, updated = updated_ts
    now = {(context, source) for context, source, _ in _messages(updated)}
    stale = [f"[{c}] {s!r}" for c, s, _ in _messages(committed) if (c, s) not in now]
    assert not stale, (
        "texts no longer in the code (run `python -m gpu_train_monitor.gui.i18n.translation_files`):\n"
        + "\n".join(stale)
    )


def test_translations_keep_every_field_tag_and_accelerator(updated_ts):
    _, updated = updated_ts
    wrong = []
    for context, source, translation in _messages(updated):
        text = translation.text or ""
        if sorted(FIELD.findall(source)) != sorted(FIELD.findall(text)):
            wrong.append(f"[{context}] {source!r} -> {text!r}: fields differ")
        if sorted(TAG.findall(source)) != sorted(TAG.findall(text)):
            wrong.append(f"[{context}] {source!r} -> {text!r}: HTML tags differ")
        if re.search(r"&[A-Za-z]", source) and not re.search(r"&[A-Za-z]", text):
            wrong.append(f"[{context}] {source!r} -> {text!r}: the keyboard accelerator is lost")
    assert not wrong, "\n".join(wrong)


TRANSLATING_CALLS = {"tr": 0, "translate": 1, "QT_TR_NOOP": 0, "QT_TRANSLATE_NOOP": 1, "Message": 0}


def _text_argument(call: ast.Call) -> ast.expr | None:
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
    index = TRANSLATING_CALLS.get(name)
    if index is None or len(call.args) <= index:
        return None
    return call.args[index]


def test_only_literal_texts_go_to_the_translator():
    """lupdate reads literals only: tr(f"...") or tr(variable) would never be translated."""
    offenders = []
    for path in source_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            argument = _text_argument(node)
            if argument is None or (isinstance(argument, ast.Constant) and isinstance(argument.value, str)):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            if name == "translate" and isinstance(argument, ast.Name | ast.Attribute | ast.Subscript):
                # translate(context, VALUE) of a text marked QT_TRANSLATE_NOOP where it was defined
                continue
            if name == "Message" and path.parts[-2:] == ("base", "text.py"):
                continue  # rebuilding a Message that was pickled or stored (its template was a literal once)
            offenders.append(f"{path.relative_to(path.parent.parent.parent)}:{node.lineno} {name}(...)")
    assert not offenders, "texts built at run time cannot be translated:\n" + "\n".join(offenders)


def test_the_catalogue_compiles_and_translates(tmp_path, qapp):
    installed = i18n.install(i18n.CHINESE, cache=tmp_path)
    try:
        assert installed.language == i18n.CHINESE and not installed.problem
        assert QCoreApplication.translate("status_text", "completed") not in ("", "completed")
        assert QLocale().language() == QLocale.Language.Chinese
    finally:
        installed.remove()
        QLocale.setDefault(QLocale.system())
    assert QCoreApplication.translate("status_text", "completed") == "completed"


def test_a_compiled_catalogue_is_reused_until_its_source_changes(tmp_path):
    source = asset("translations") / ts_name(i18n.CHINESE)
    first = compiled(source, tmp_path)
    stamp = first.stat().st_mtime_ns
    assert compiled(source, tmp_path) == first and first.stat().st_mtime_ns == stamp
    changed = tmp_path / "src" / source.name
    changed.parent.mkdir()
    changed.write_text(source.read_text(encoding="utf-8").replace("</TS>", "<!-- edited -->\n</TS>"), encoding="utf-8")
    assert compiled(changed, tmp_path) != first


def test_the_language_follows_the_system_until_the_user_chooses(tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    assert i18n.saved_choice(settings) == i18n.SYSTEM
    assert i18n.resolve(i18n.SYSTEM, QLocale("zh_CN")) == i18n.CHINESE
    assert i18n.resolve(i18n.SYSTEM, QLocale("de_DE")) == i18n.ENGLISH
    i18n.save_choice(settings, i18n.ENGLISH)
    settings.sync()
    again = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    assert i18n.saved_choice(again) == i18n.ENGLISH
    assert i18n.resolve(i18n.saved_choice(again), QLocale("zh_CN")) == i18n.ENGLISH
    again.setValue(i18n.SETTING, "klingon")  # a hand-edited settings file
    assert i18n.saved_choice(again) == i18n.SYSTEM


def test_numbers_follow_the_language_s_locale():
    assert i18n.locale_for(i18n.CHINESE, QLocale("de_DE")).language() == QLocale.Language.Chinese
    german_english = i18n.locale_for(i18n.ENGLISH, QLocale("de_DE"))
    assert german_english.toString(1234.5, "f", 1) == "1,234.5"
    assert i18n.locale_for(i18n.ENGLISH, QLocale("en_GB")).name() == "en_GB"  # the system's own English


def test_a_missing_tool_leaves_the_app_english(tmp_path, monkeypatch, qapp):
    def missing(name):
        raise FileNotFoundError(f"PySide6's {name} is not installed")

    monkeypatch.setattr("gpu_train_monitor.gui.i18n.translation_files.qt_tool", missing)
    installed = i18n.install(i18n.CHINESE, cache=tmp_path)
    QLocale.setDefault(QLocale.system())
    assert installed.language == i18n.ENGLISH and "lrelease" in installed.problem
