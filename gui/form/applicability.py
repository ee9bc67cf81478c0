"""Which of the form's settings apply to what else is chosen, and why not: greyed out with the reason as
the tooltip. Also what `auto` stands for in the model combo ("auto (tiny-cnn on this CPU)").

Two kinds of "not here": a setting the run would ignore (pin_memory on the CPU) is greyed out and kept
(a greyed-out tick box shows unticked and is off in the config and the log, and its tick comes back when
it applies again);
a choice the device cannot run (fp16 on the CPU, cuDNN's autotuner off CUDA, torch.compile without a
compiler) is greyed out too, but when it is chosen anyway (saved settings, a preset, another device
picked after) it stays enabled so it can be undone, and the form's check refuses it inline with the
reason from `core.device.fast_paths`, which keeps Start disabled.

The process count (nproc) is labelled for what it counts here: "GPUs" on a CUDA device, "CPU processes"
elsewhere; sync_bn applies only with more than one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QCheckBox, QComboBox, QSpinBox

from core.config.run_config import BOUNDS
from gui.form.text import field_tooltip
from gui.qt.core_text import core_text

if TYPE_CHECKING:
    from gui.form.settings_form import SettingsForm

KEPT_TICK = "tickKeptWhileNotUsed"  # a tick box's property: it was ticked when its setting stopped applying
FAST_PATHS = ("cudnn_benchmark", "compile", "fused_optimizer")
# why a setting is not used with what else is chosen: the tooltip of a greyed-out setting
NOT_USED = {
    "gpu_copies_only": QT_TRANSLATE_NOOP("form_applicability", "pin_memory only speeds up copies to a GPU"),
    "no_copy_on_cpu": QT_TRANSLATE_NOOP("form_applicability", "the CPU needs no copy to a device"),
    "stream_copies": QT_TRANSLATE_NOOP("form_applicability", "only the stream placement copies batches"),
    "resident_no_workers": QT_TRANSLATE_NOOP(
        "form_applicability", "the resident placement keeps the data on the device: no loader workers"),
    "synthetic_only": QT_TRANSLATE_NOOP("form_applicability", "only the synthetic dataset is generated"),
    "own_dataset_files": QT_TRANSLATE_NOOP("form_applicability", "your own dataset's factory finds its own files"),
    "synthetic_no_files": QT_TRANSLATE_NOOP("form_applicability", "the synthetic dataset needs no files"),
    "not_downloadable": QT_TRANSLATE_NOOP("form_applicability",
                                          "only mnist, fashion-mnist and cifar10 can be downloaded"),
    "adamw_no_momentum": QT_TRANSLATE_NOOP("form_applicability", "AdamW has no momentum setting"),
    "one_process": QT_TRANSLATE_NOOP(
        "form_applicability", "one process already normalises over its whole batch (set more than one process)"),
}


def is_auto_model(text: str) -> bool:
    """'auto' as typed, or as the form shows it (in the user's language, '自动' in Chinese), once devices are
    known with what it stands for: 'auto (tiny-cnn on this CPU)' (in Chinese the parenthesis is the
    full-width one). No model name holds a parenthesis."""
    text = text.strip().lower()
    words = {"auto", QCoreApplication.translate("form_widgets", "auto").strip().lower()}
    return any(text == word or text.startswith((f"{word} (", f"{word}（")) for word in words)


def update_applicability(form: SettingsForm) -> None:
    kind = form.device_kind()
    on_cpu = kind == "cpu"
    stream = form.value("placement") != "resident"
    synthetic = form.value("dataset") == "synthetic"
    own = ":" in str(form.value("dataset"))  # your own dataset (package.module:factory) finds its own files
    _applies(form, "pin_memory", not on_cpu and stream, "gpu_copies_only" if on_cpu else "stream_copies")
    _applies(form, "non_blocking", not on_cpu and stream, "no_copy_on_cpu" if on_cpu else "stream_copies")
    _applies(form, "workers", stream, "resident_no_workers")
    _applies(form, "synthetic_samples", synthetic, "synthetic_only")
    _applies(form, "data_dir", not synthetic and not own, "own_dataset_files" if own else "synthetic_no_files")
    _applies(form, "download", form.value("dataset") in ("mnist", "fashion-mnist", "cifar10"), "not_downloadable")
    _applies(form, "momentum", form.value("optimizer") == "sgd", "adamw_no_momentum")
    _applies(form, "sync_bn", int(form.value("nproc")) > 1, "one_process")
    show_nproc_meaning(form)
    problems = form.devices.problems_of(str(form.value("device")))
    amp: QComboBox = form.widgets["amp"]
    model = amp.model()
    if isinstance(model, QStandardItemModel):
        item = model.item(amp.findData("fp16"))
        item.setEnabled(not on_cpu)
        if on_cpu:
            item.setToolTip(QCoreApplication.translate("form_applicability",
                                                       "fp16 autocast needs a CUDA or MPS device"))
        else:
            item.setToolTip(QCoreApplication.translate("form_applicability", "float16 autocast + GradScaler"))
        if on_cpu and amp.currentData() == "fp16":
            amp.setCurrentIndex(amp.findData("off"))
        bf16 = model.item(amp.findData("bf16"))
        bf16.setEnabled("amp=bf16" not in problems or amp.currentData() == "bf16")
        if "amp=bf16" in problems:
            bf16.setToolTip(core_text(problems["amp=bf16"]))
        else:
            bf16.setToolTip(QCoreApplication.translate("form_applicability",
                                                       "bfloat16 autocast (no gradient scaler needed)"))
    for field in FAST_PATHS:
        problem = problems.get(field)
        widget = form.widgets[field]
        widget.setEnabled(problem is None or bool(form.value(field)))
        if problem is None:
            widget.setToolTip(field_tooltip(field))
        else:
            widget.setToolTip(QCoreApplication.translate("form_applicability", "Cannot run on this device: {problem}")
                              .format(problem=core_text(problem)))
    show_auto_model(form)


def show_nproc_meaning(form: SettingsForm) -> None:
    """Label and bound the process count by what it counts on the selected device: "GPUs" up to this machine's
    CUDA GPUs, else "CPU processes" up to its cores. A larger saved value stays (the form's check says why it
    cannot run) rather than being cut down unseen."""
    meaning = form.nproc_meaning()
    spin: QSpinBox = form.widgets["nproc"]
    form.labels["nproc"].setText(core_text(meaning.label))
    limit = meaning.limit if meaning.limit is not None else int(BOUNDS["nproc"].maximum)
    spin.setMaximum(max(limit, spin.value()))
    spin.setToolTip(field_tooltip("nproc") if meaning.limit is None else core_text(meaning.tooltip))
    form.labels["nproc"].setToolTip(spin.toolTip())


def _applies(form: SettingsForm, field: str, applies: bool, reason: str) -> None:
    """`reason`: the NOT_USED key of why the setting is not used."""
    widget = form.widgets[field]
    target = widget.parentWidget() if field == "data_dir" else widget
    target.setEnabled(applies)
    if isinstance(widget, QCheckBox):
        _keep_tick(widget, applies)
    if applies:
        widget.setToolTip(field_tooltip(field))
        return
    why = QCoreApplication.translate("form_applicability", NOT_USED[reason])
    widget.setToolTip(QCoreApplication.translate("form_applicability", "Not used: {reason}").format(reason=why))


def _keep_tick(box: QCheckBox, applies: bool) -> None:
    """A tick on a setting that does not apply is not in effect: show it off (the config reads it off) and
    give it back once the setting applies again."""
    if not (bool(box.property(KEPT_TICK)) if applies else box.isChecked()):
        return  # nothing kept to give back, or nothing ticked to take off
    box.blockSignals(True)  # the form is validating already: no second round from the toggle
    box.setChecked(applies)
    box.blockSignals(False)
    box.setProperty(KEPT_TICK, not applies)


def auto_model_text(form: SettingsForm) -> str:
    """'auto (tiny-cnn on this CPU)' once the devices are known: the model a run would build."""
    if not form.devices.known:
        return QCoreApplication.translate("form_widgets", "auto")
    from gui.form.estimate import resolved_model

    model = resolved_model("auto", form.device_kind())
    if form.device_kind() == "cpu":
        return QCoreApplication.translate("form_applicability", "auto ({model} on this CPU)").format(model=model)
    return QCoreApplication.translate("form_applicability", "auto ({model} on this GPU)").format(model=model)


def show_auto_model(form: SettingsForm) -> None:
    """Keep the model combo's auto entry (and the text, when it shows auto) saying what auto stands for
    on the selected device."""
    combo: QComboBox = form.widgets["model"]
    text = auto_model_text(form)
    index = combo.findData("auto")  # by its data: its text may be another language's (a language change)
    if index < 0:
        index = next((i for i in range(combo.count()) if is_auto_model(combo.itemText(i))), -1)
    current = combo.currentText()
    shows_auto = is_auto_model(current) or (index >= 0 and current == combo.itemText(index))
    # auto shown by the program, or typed and left: say what it stands for; mid-typing, leave the text alone
    show = shows_auto and current != text and not combo.lineEdit().hasFocus()
    if (index < 0 or combo.itemText(index) == text) and not show:
        return
    combo.blockSignals(True)
    if index >= 0:
        combo.setItemText(index, text)
    combo.setEditText(text if show else current)  # renaming the current item must not change what was typed
    combo.blockSignals(False)
