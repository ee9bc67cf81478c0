"""Texts that follow the language while the window is open.

Installing or removing a `QTranslator` makes Qt send `QEvent.LanguageChange` to every window. A
`Retranslator` keeps, for each text given to it, the setter that shows it and a function that says it in
the language installed now, and on `LanguageChange` says them all again. Before them, every other text the
window shows (set as a run went: plot titles, legends, a panel's message) is found in the catalogue and
said again (`gpu_train_monitor.gui.i18n.shown_texts`). Texts derived from state (the process count's label, why a
setting is greyed out, what auto stands for, the run's numbers and state, the Runs tab's line) are derived again by the
refreshers it is given, last, so numbers follow the new locale too.

`keep_window_texts` applies it to the main window: its menus, tabs and settings form are kept, its panels'
own update methods are the refreshers. The log's lines already written stay in the language they were
written in (its history); new ones come in the new language.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QEvent, QObject
from PySide6.QtWidgets import QApplication, QComboBox, QGroupBox, QTabWidget, QWidget

from gpu_train_monitor.base.user_code import SPEC_FORM
from gpu_train_monitor.gui.form.text import field_help, field_tooltip, label
from gpu_train_monitor.gui.i18n import language as i18n
from gpu_train_monitor.gui.i18n.shown_texts import say_shown_texts_again
from gpu_train_monitor.gui.qt.core_text import CHOICE_TEXTS, choice_text

if TYPE_CHECKING:
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QMenu

    from gpu_train_monitor.gui.form.settings_form import SettingsForm
    from gpu_train_monitor.gui.history.run_window import StoredRunView
    from gpu_train_monitor.gui.window.parts import WindowParts

Setter = Callable[[str], None]
Say = Callable[[], str]


def translated(context: str, source: str, disambiguation: str | None = None) -> Say:
    """`source` as the translator installed when called says it (lupdate sees the literal at the caller's
    QT_TRANSLATE_NOOP)."""
    return lambda: QCoreApplication.translate(context, source, disambiguation)


class Retranslator(QObject):
    """Says its texts again when `window` gets `LanguageChange`."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._texts: list[tuple[Setter, Say]] = []
        self._refreshers: list[Callable[[], None]] = []
        self._language = i18n.active()  # the language the window's texts are in now
        window.installEventFilter(self)

    def keep(self, setter: Setter, say: Say) -> None:
        """Show `say()` with `setter` now and after every language change."""
        setter(say())
        self._texts.append((setter, say))

    def refresh_with(self, refresher: Callable[[], None]) -> None:
        """Call `refresher` after the kept texts on every language change (texts derived from state)."""
        self._refreshers.append(refresher)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if watched is self._window and event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        return False

    def retranslate(self) -> None:
        say_shown_texts_again(self._window, self._language)
        for other in QApplication.topLevelWidgets():  # a run's own window, a stored run's: what they show
            if other is not self._window and other.isVisible() and other.findChild(Retranslator) is None:
                say_shown_texts_again(other, self._language)
        self._language = i18n.active()
        for setter, say in list(self._texts):
            try:
                setter(say())
            except RuntimeError:  # its widget was deleted (a closed dialog's): nothing left to say it in
                self._texts.remove((setter, say))
        for refresher in self._refreshers:
            refresher()


def _keep_action(texts: Retranslator, action: QAction, context: str, text: str, status_tip: str | None = None) -> None:
    texts.keep(action.setText, translated(context, text))
    if status_tip is not None:
        texts.keep(action.setStatusTip, translated(context, status_tip))


def _keep_tab(texts: Retranslator, tabs: QTabWidget, page: QWidget, say: Say) -> None:
    texts.keep(lambda text: tabs.setTabText(tabs.indexOf(page), text), say)


def _keep_item(texts: Retranslator, combo: QComboBox, index: int, field: str) -> None:
    """A combo item that shows a word choice (off, stream): said again; its data, the identifier, stays."""
    choice = combo.itemData(index)
    texts.keep(lambda text: combo.setItemText(index, text), lambda: choice_text(field, choice))


def _keep_menus(texts: Retranslator, parts: WindowParts) -> None:
    menus = parts.menus
    titles: list[tuple[QMenu, str, str]] = [
        (menus.file_menu, "MenuBar", "&File"),
        (menus.run_menu, "MenuBar", "&Run"),
        (menus.compare_menu, "MenuBar", "&Compare"),
        (menus.settings_menu, "MenuBar", "&Settings"),
        (menus.help_menu, "MenuBar", "&Help"),
        (menus.language_menu, "LanguageMenu", "&Language"),
    ]
    for menu, context, title in titles:
        texts.keep(menu.setTitle, translated(context, title))
    _keep_action(
        texts,
        menus.save_plots_action,
        "MenuBar",
        "Save plots…",
        "Save the plots shown as PNG or SVG images, one file per plot",
    )
    _keep_action(
        texts,
        menus.watch_action,
        "MenuBar",
        "Watch a script…",
        "Run a training script of yours unchanged and follow it live, as a run of the window's own",
    )
    _keep_action(
        texts,
        menus.open_snapshot_action,
        "MenuBar",
        "Open memory snapshot…",
        "Show a CUDA memory snapshot (torch.cuda.memory._dump_snapshot) from any machine: its timeline"
        " and the largest allocations at its peak",
    )
    _keep_action(texts, menus.quit_action, "MenuBar", "&Quit", "Close the window (a run under way is stopped first)")
    _keep_action(texts, menus.checkpoint_action, "MenuBar", "Checkpoint now")  # its tip follows the run's state
    _keep_action(
        texts,
        menus.about_action,
        "MenuBar",
        "&About GPU Training Monitor",
        "The versions of the app, PyTorch, CUDA, the driver and Qt",
    )
    _keep_action(
        texts,
        menus.copy_info_action,
        "MenuBar",
        "&Copy system info",
        "Put the versions on the clipboard, for a bug report",
    )


def _keep_tabs(texts: Retranslator, parts: WindowParts) -> None:
    view, insight = parts.view, parts.insight
    for page, title in (
        (view.log, "Log"),
        (parts.history, "Runs"),
        (view.step_time, "Step time"),
        (parts.what_if, "What if…"),
        (insight.nvml_panel, "GPU (NVML)"),
        (insight.finder_panel, "Batch-size finder"),
    ):
        _keep_tab(texts, parts.tabs, page, translated("MainWindow", title))
    _keep_tab(texts, parts.tabs, view.breakdown_view, view.breakdown_view.tab_title)
    for page, title in ((view.loss_plot, "Training loss"), (parts.compare.view, "Comparison")):
        _keep_tab(texts, parts.plot_tabs, page, translated("MainWindow", title))


def _keep_form(texts: Retranslator, form: SettingsForm) -> None:
    from gpu_train_monitor.gui.form.layout import GROUPS

    boxes = {box.title(): box for box in form.findChildren(QGroupBox)}
    for title in GROUPS:
        box = boxes.get(QCoreApplication.translate("SettingsForm", title))
        if box is not None:
            texts.keep(box.setTitle, translated("SettingsForm", title))
    for field, field_label in form.labels.items():
        texts.keep(field_label.setText, lambda field=field: label(field))
        texts.keep(field_label.setToolTip, lambda field=field: field_help(field))
        texts.keep(form.widgets[field].setToolTip, lambda field=field: field_tooltip(field))
    model_edit = form.widgets["model"].lineEdit()
    texts.keep(
        model_edit.setPlaceholderText,
        lambda: QCoreApplication.translate("form_widgets", "a name from the list, or {spec_form}").format(
            spec_form=SPEC_FORM
        ),
    )
    for field in CHOICE_TEXTS:
        combo = form.widgets.get(field)
        if not isinstance(combo, QComboBox) or field in ("device", "model"):  # theirs say more: refreshed below
            continue
        for index in range(combo.count()):
            _keep_item(texts, combo, index, field)
    # the devices' names (the CPU's "(N threads)"), listed again; then the process count's label,
    # greyed-out settings' tooltips and what auto stands for, derived again
    texts.refresh_with(lambda: form.set_devices(form.listed_devices) if hasattr(form, "listed_devices") else None)
    texts.refresh_with(form.update_applicability)
    form.update_applicability()  # now too: the plain tooltips and labels kept above replaced them


def _refresh_panels(texts: Retranslator, parts: WindowParts) -> None:
    """Texts the window derives from the run's state, derived again by their own update methods."""
    stats, run_control = parts.view.stats, parts.run_control
    texts.refresh_with(lambda: stats.set_state(stats.state))
    texts.refresh_with(lambda: run_control.label.setText(run_control.state.shown))
    texts.refresh_with(parts.view.breakdown_view.show_again)
    texts.refresh_with(parts.view.step_time.show_again)
    texts.refresh_with(parts.compare.view.phase_split.say_headers)
    texts.refresh_with(parts.peak.show_again)
    texts.refresh_with(parts.what_if.show_again)
    texts.refresh_with(parts.device_watch.show_device)
    texts.refresh_with(parts.history.refresh)  # its line: the counts and the store's place
    parts.history.run_window_opened.connect(keep_run_window_texts)  # a recorded run's window keeps its own


def keep_run_window_texts(view: StoredRunView) -> Retranslator:
    """A stored or followed run's window: what it shows said again, its header, state and breakdown derived
    again by its own update method."""
    texts = Retranslator(view)
    texts.refresh_with(view.show_again)
    return texts


def keep_window_texts(window: QWidget, parts: WindowParts) -> Retranslator:
    """The main window's menus, tabs, settings form and panels (its `parts`), said again in the language installed
    next."""
    texts = Retranslator(window)
    _keep_menus(texts, parts)
    _keep_tabs(texts, parts)
    _keep_form(texts, parts.form)
    _refresh_panels(texts, parts)
    return texts
