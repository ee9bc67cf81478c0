"""The Compare button's menu: the ready-made comparisons that apply on this machine, and a custom one.

The ready-made ones come from `gpu_train_monitor.compare.plan.ready_comparisons` for the form's settings, this
machine's GPU (the first CUDA device, else the Apple GPU, else none) and whether torch.compile can
compile for the device they run on; the menu is rebuilt each time it opens, so it follows the form. Those this
machine cannot run (`gpu_train_monitor.compare.plan.absent_comparisons`: CUDA only, and no CUDA GPU here) are
listed greyed out, saying what they need, with why as the tooltip.
A custom comparison is 2 to 4 lines of `setting=value,...`, each parsed by
`gpu_train_monitor.compare.plan.parse_overrides`; what does not parse is named inline (core's reason, translated from
its structure by `gpu_train_monitor.gui.qt.core_text`) and nothing starts.
Every run trains the form's Max steps (or `DEFAULT_STEPS` when it has none): the menu says how many.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gpu_train_monitor.base.errors import ConfigError, UserError
from gpu_train_monitor.base.text import Message
from gpu_train_monitor.compare.plan import (
    DEFAULT_STEPS,
    MAX_RUNS,
    MIN_RUNS,
    AbsentComparison,
    ReadyComparison,
    absent_comparisons,
    parse_overrides,
    plan,
    ready_comparisons,
)
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.gui.form.device_table import DeviceTable
from gpu_train_monitor.gui.qt.core_text import core_text, error_text

CUSTOM_NAME = "custom comparison"  # the custom entry's data in the menu (its text is translated)
EXAMPLE = "placement=stream\nplacement=resident"  # settings and values: the same in every language


def start_error(exc: UserError) -> str:
    """Why a comparison could not start, in a sentence: a plan's error without its 'vs: ' field (the
    comparison's own option name), any other as the form says it ('Device: cuda:3 is not on this machine')."""
    from gpu_train_monitor.gui.form.text import friendly

    return error_text(exc, with_field=False) if isinstance(exc, ConfigError) and exc.field == "vs" else friendly(exc)


def parse_lines(text: str, base: RunConfig | None = None) -> list[dict[str, Any]]:
    """One override set per non-empty line; a ConfigError (field 'vs') names the line and the override that
    does not parse, a count outside 2..4, or (with `base`) two lines that make the same run. Its detail is in
    the user's language, or core's own `Message` for `gpu_train_monitor.gui.qt.core_text` to translate."""
    overrides: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            overrides.append(parse_overrides(line))
        except ConfigError as exc:
            raise ConfigError(
                "vs",
                QCoreApplication.translate("compare_menu", "line {number}: {problem}").format(
                    number=number, problem=line_problem(exc)
                ),
            ) from None
    if not MIN_RUNS <= len(overrides) <= MAX_RUNS:
        raise ConfigError(
            "vs",
            QCoreApplication.translate(
                "compare_menu", "write {least} to {most} lines, one run each (this has {count})"
            ).format(least=MIN_RUNS, most=MAX_RUNS, count=len(overrides)),
        )
    if base is not None:
        try:
            plan(base, overrides)
        except ConfigError as exc:
            raise ConfigError("vs", exc.detail) from None
    return overrides


def line_problem(exc: ConfigError) -> str:
    """Why a line does not parse, in the window's words: a setting every run shares is set once in the form
    (core's text names the CLI's option, --max-steps, which the window has not)."""
    from gpu_train_monitor.gui.form.text import label

    detail = exc.detail
    if isinstance(detail, Message) and detail.template.endswith("give it once, as {option}"):
        return QCoreApplication.translate(
            "compare_menu",
            "{item}: every run of a comparison has the same {setting} (they race over the same "
            "steps); set it once, in the form",
        ).format(item=repr(detail.params.get("item")), setting=label(str(detail.params.get("field"))))
    return error_text(exc, with_field=False)


def steps_each(base: RunConfig) -> int:
    """Steps every run of a comparison of `base` trains (as `gpu_train_monitor.compare.plan.plan` shares them)."""
    return base.max_steps or DEFAULT_STEPS


class CustomCompareDialog(QDialog):
    """2 to 4 lines of overrides, checked as they are typed; Run is enabled only when they parse."""

    requested = Signal(object)  # the list of override dicts

    def __init__(self, base: Callable[[], RunConfig], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Custom comparison"))
        self._base = base
        self.intro = QLabel()
        self.intro.setWordWrap(True)
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("customOverrides")
        self.editor.setPlaceholderText(EXAMPLE)
        self.editor.textChanged.connect(self._on_text_changed)
        self.error = QLabel()
        self.error.setObjectName("formMessage")  # the form's inline error style
        self.error.setWordWrap(True)
        self.error.hide()
        self.run_button = QPushButton(self.tr("Run comparison"))
        self.run_button.setObjectName("runCustomComparison")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self._on_run)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):  # Enter is a new line in the box: Ctrl+Enter runs, as in chats
            QShortcut(QKeySequence(keys), self).activated.connect(self.run_button.click)  # not when disabled
        cancel = QPushButton(self.tr("Cancel"))
        cancel.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(cancel)
        buttons.addWidget(self.run_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.error)
        layout.addLayout(buttons)
        self.resize(520, 320)

    def open_for(self, steps: int) -> None:
        if steps == DEFAULT_STEPS:
            intro = self.tr(
                "One run per line, {least} to {most} lines: <code>setting=value</code> pairs separated by commas, "
                "applied on the form's settings (e.g. <code>amp=bf16,channels_last=true</code>). The runs train one "
                "after another, <b>{steps} steps each</b> (the form's Max steps, or {steps} when it has none)."
            )
        else:
            intro = self.tr(
                "One run per line, {least} to {most} lines: <code>setting=value</code> pairs separated by commas, "
                "applied on the form's settings (e.g. <code>amp=bf16,channels_last=true</code>). The runs train one "
                "after another, <b>{steps} steps each</b> (the form's Max steps)."
            )
        self.intro.setText(intro.format(least=MIN_RUNS, most=MAX_RUNS, steps=steps))
        self._check()
        self.show()
        self.raise_()
        self.activateWindow()
        self.editor.setFocus()

    def overrides(self) -> list[dict[str, Any]]:
        """The typed override sets; ConfigError (naming the line) when they cannot run as a comparison."""
        try:
            base = self._base()
        except UserError:
            base = None  # the form says what is wrong with it; the lines are checked on their own
        return parse_lines(self.editor.toPlainText(), base)

    def _check(self) -> list[dict[str, Any]] | None:
        try:
            found = self.overrides()
        except ConfigError as exc:
            self.show_error(error_text(exc, with_field=False) if self.editor.toPlainText().strip() else "")
            return None
        self.show_error("")
        return found

    def show_error(self, text: str) -> None:
        """Inline, under the lines; Run stays disabled while there is one (an empty box shows none)."""
        self.error.setText(text)
        self.error.setVisible(bool(text))
        self.run_button.setEnabled(not text and bool(self.editor.toPlainText().strip()))

    @Slot()
    def _on_text_changed(self) -> None:
        self._check()

    @Slot()
    def _on_run(self) -> None:
        found = self._check()
        if found is not None:
            self.requested.emit(found)


# starts a comparison (overrides, name) and returns why it could not, or None: the window's start_comparison
Starter = Callable[[list[dict[str, Any]], str], "str | None"]


class CompareMenu(QObject):
    """Fills `button`'s menu from `form` and starts what is chosen with `start`. A custom comparison that
    could not start keeps its dialog open with the reason inline; every refusal is logged too."""

    def __init__(self, button: QToolButton, form: Any, start: Starter, log: Any, parent: QWidget | None = None) -> None:
        """`form`: the SettingsForm (its config is the base, its device table says what applies here);
        `log`: the window's LogPanel."""
        super().__init__(parent)
        self._form, self._start, self._log = form, start, log
        self.button = button
        self.menu = QMenu(button)
        self.menu.setToolTipsVisible(True)
        self.menu.aboutToShow.connect(self._on_about_to_show)
        self.menu.triggered.connect(self._on_triggered)
        button.setMenu(self.menu)
        button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.dialog = CustomCompareDialog(self._base, parent)
        self.dialog.requested.connect(self._on_custom_requested)
        self._ready: dict[str, ReadyComparison] = {}

    def _base(self) -> RunConfig:
        return self._form.config(scan=False)

    def _devices(self) -> DeviceTable:
        return self._form.devices

    def ready(self) -> list[ReadyComparison]:
        """The ready-made comparisons that apply here for the form's settings (none while it is invalid)."""
        devices = self._devices()
        if not devices.known:
            return []
        try:
            base = self._base()
        except UserError:
            return []
        gpu = devices.gpu()
        gpus = sum(kind == "cuda" for spec, kind in devices.kinds.items() if spec != "auto")
        processes = gpus if gpu is not None and gpu.startswith("cuda") else (os.cpu_count() or 1)
        return ready_comparisons(base, gpu, devices.problem(gpu or "cpu", "compile") is None, processes)

    def absent(self) -> list[AbsentComparison]:
        """The ready-made comparisons this machine cannot run, and why (none until its devices are known)."""
        devices = self._devices()
        return absent_comparisons(devices.gpu()) if devices.known else []

    def rebuild(self) -> None:
        self.menu.clear()
        self._ready = {ready.name: ready for ready in self.ready()}
        try:
            steps: int | None = steps_each(self._base())
        except UserError:
            steps = None
        heading = self.menu.addAction(
            self.tr("Each run trains {steps} steps, one run after another").format(steps=steps)
            if steps
            else self.tr("Fix the settings first: a comparison starts from them")
        )
        heading.setEnabled(False)
        for name, ready in self._ready.items():
            action = self.menu.addAction(core_text(name))
            action.setData(name)
            described = core_text(ready.description)
            action.setToolTip(
                self.tr("{description}; {steps} steps each").format(
                    description=described[:1].upper() + described[1:], steps=steps
                )
            )
        for absent in self.absent():  # greyed out: what it needs in the entry, why in its tooltip
            action = self.menu.addAction(
                self.tr("{name} ({needs})").format(name=core_text(absent.name), needs=core_text(absent.needs))
            )
            action.setEnabled(False)
            reason = core_text(absent.reason)
            action.setToolTip(reason[:1].upper() + reason[1:])
        self.menu.addSeparator()
        custom = self.menu.addAction(self.tr("Custom comparison…"))
        custom.setData(CUSTOM_NAME)
        custom.setToolTip(
            self.tr("Type {least} to {most} runs as setting=value lines").format(least=MIN_RUNS, most=MAX_RUNS)
        )
        custom.setEnabled(steps is not None)

    def start(self, overrides: list[dict[str, Any]], name: str, from_dialog: bool = False) -> None:
        error = self._start(overrides, name)
        if error:
            self._log.add(self.tr("the comparison could not start: {reason}").format(reason=error), "error")
        if from_dialog and error:  # the custom dialog shows the reason inline
            self.dialog.show_error(error)
        elif from_dialog:
            self.dialog.hide()

    def open_custom(self) -> None:
        self.dialog.open_for(steps_each(self._base()))

    @Slot()
    def _on_about_to_show(self) -> None:
        self.rebuild()

    @Slot(QAction)
    def _on_triggered(self, action: QAction) -> None:
        name = action.data()
        if name == CUSTOM_NAME:
            self.open_custom()
        elif name in self._ready:  # its name as core wrote it: the comparison's title translates it
            self.start([dict(o) for o in self._ready[name].overrides], self._ready[name].name)

    @Slot(object)
    def _on_custom_requested(self, overrides: list[dict[str, Any]]) -> None:
        self.start(overrides, self.tr("custom comparison"), from_dialog=True)
