"""The window's language: the user's choice (English, 简体中文, or the system's), remembered in QSettings.

A choice applies at once (`switch`): installing or removing a translator makes Qt send `LanguageChange` to
every window, and the windows say their texts again (`gpu_train_monitor.gui.window.retranslate`); the log's lines keep
the language they were written in. Qt's own dialogs (file pickers, message box buttons) are translated by the
`qtbase` catalogue that ships with PySide6. Numbers and dates follow the locale that goes with the
language (`QLocale.setDefault`), which `gpu_train_monitor.gui.qt.locale_format` reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_cache_dir
from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QSettings, QTranslator

from gpu_train_monitor.gui.i18n.translation_files import APP_NAME, compiled, ts_name
from gpu_train_monitor.gui.qt.resources import asset

SETTING = "language"
SYSTEM = "system"
ENGLISH = "en"
CHINESE = "zh_CN"
CHOICES = (SYSTEM, ENGLISH, CHINESE)
# each language named in itself, as language menus do: a reader finds their own
NATIVE_NAMES = {ENGLISH: "English", CHINESE: "简体中文"}


def saved_choice(settings: QSettings) -> str:
    value = settings.value(SETTING, SYSTEM)
    return value if value in CHOICES else SYSTEM


def save_choice(settings: QSettings, choice: str) -> None:
    settings.setValue(SETTING, choice if choice in CHOICES else SYSTEM)


def system_language(locale: QLocale | None = None) -> str:
    """The language to use for `locale` (the system's): Chinese for any Chinese locale, else English."""
    locale = locale or QLocale.system()
    for tag in locale.uiLanguages() or [locale.name()]:
        code = tag.replace("_", "-").lower()
        if code.startswith("zh"):
            return CHINESE
        if code.startswith("en"):
            return ENGLISH
    return ENGLISH


def resolve(choice: str, system: QLocale | None = None) -> str:
    """The language a choice means on this system."""
    return system_language(system) if choice == SYSTEM else choice


def locale_for(language: str, system: QLocale | None = None) -> QLocale:
    """The locale numbers and dates follow: the system's when it speaks `language`, else the language's own."""
    system = system or QLocale.system()
    speaks = QLocale.Language.Chinese if language == CHINESE else QLocale.Language.English
    if system.language() == speaks:
        return system
    return (
        QLocale(QLocale.Language.Chinese, QLocale.Country.China)
        if language == CHINESE
        else QLocale(QLocale.Language.English, QLocale.Country.UnitedStates)
    )


def translation_source(language: str) -> Path:
    return asset("translations") / ts_name(language)


def cache_dir() -> Path:
    return Path(user_cache_dir(APP_NAME.replace("_", "-"))) / "translations"


@dataclass
class InstalledLanguage:
    """What `install` put in place: the language and its translators (kept alive while installed)."""

    language: str
    translators: tuple[QTranslator, ...] = ()
    problem: str = ""  # why the translation could not be loaded (the window then stays English)

    def remove(self) -> None:
        global _active, _installed
        for translator in self.translators:
            QCoreApplication.removeTranslator(translator)
        self.translators = ()
        if _installed is self:  # an older one removed late leaves the language installed since alone
            _active, _installed = ENGLISH, None


_active = ENGLISH  # the language the app's texts are in (the catalogue installed last)
_installed: InstalledLanguage | None = None  # what `install` put in place last, for `switch` to remove


def active() -> str:
    """The language the window speaks in this process."""
    return _active


def install(language: str, cache: Path | None = None, system: QLocale | None = None) -> InstalledLanguage:
    """Translate the application into `language` ("en" or "zh_CN") from now on."""
    global _active, _installed
    QLocale.setDefault(locale_for(language, system))
    _active = ENGLISH
    if language == ENGLISH:
        _installed = InstalledLanguage(language)
        return _installed
    translators: list[QTranslator] = []
    try:
        qm = compiled(translation_source(language), cache or cache_dir())
    except (OSError, RuntimeError, ValueError) as exc:  # no lrelease, an unwritable cache: stay English
        return InstalledLanguage(ENGLISH, problem=f"{NATIVE_NAMES[language]}: {exc}")
    app_translator = QTranslator()
    if not app_translator.load(str(qm)):
        return InstalledLanguage(ENGLISH, problem=f"{NATIVE_NAMES[language]}: {qm} could not be loaded")
    translators.append(app_translator)
    qt_translator = QTranslator()  # Qt's own texts: dialog buttons, file dialogs, context menus
    if qt_translator.load(f"qtbase_{language}", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        translators.append(qt_translator)
    for translator in translators:
        QCoreApplication.installTranslator(translator)
    _active = language
    _installed = InstalledLanguage(language, tuple(translators))
    return _installed


def switch(language: str, cache: Path | None = None, system: QLocale | None = None) -> InstalledLanguage:
    """The app in `language` from now on, while it runs: the catalogue installed before is removed (both
    post `LanguageChange`, which the windows answer by saying their texts again) and numbers follow the new
    language's locale at their next update. A catalogue that cannot load leaves the app in English."""
    previous = _installed
    if previous is not None:
        previous.remove()
    return install(language, cache, system)
