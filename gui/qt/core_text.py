"""Core's texts in the user's language, translated at the window's edge from their structure.

`core` never imports Qt; its texts for people are `gpu_train_monitor.base.text.Message`s: English strings that keep
their template and values. Here the template goes through Qt's translator (context "", where `pyside6-lupdate`
puts every `Message("...")` template) and is filled with the same values, themselves translated when they
are `Message`s. A plain `str` (an exception from torch, a message stored by an older version) is shown as
it is: there is no structure to translate from, and parsing English sentences is what this avoids.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from gpu_train_monitor.base.errors import ConfigError
from gpu_train_monitor.base.text import Message, message_of

# what a choice's item shows where a word needs saying in the user's language (the item's data, which the
# form reads, stays the identifier; identifiers that are names, like sgd, bf16, resnet18 or cifar10, show as
# they are; words like auto, off and synthetic are words, shown in the user's language)
CHOICE_TEXTS: dict[str, dict[str, str]] = {
    "device": {"auto": QT_TRANSLATE_NOOP("form_widgets", "auto")},  # its combo item says which: settings_form
    "model": {"auto": QT_TRANSLATE_NOOP("form_widgets", "auto")},
    "dataset": {"synthetic": QT_TRANSLATE_NOOP("form_widgets", "synthetic")},  # synthetic-text: a name
    "attention": {
        "fused": QT_TRANSLATE_NOOP("form_widgets", "fused"),
        "plain": QT_TRANSLATE_NOOP("form_widgets", "plain"),
    },
    "amp": {"off": QT_TRANSLATE_NOOP("form_widgets", "off")},
    "placement": {
        "auto": QT_TRANSLATE_NOOP("form_widgets", "auto"),
        "stream": QT_TRANSLATE_NOOP("form_widgets", "stream"),
        "resident": QT_TRANSLATE_NOOP("form_widgets", "resident"),
    },
    "on_oom": {
        "stop": QT_TRANSLATE_NOOP("form_widgets", "stop"),
        "shrink": QT_TRANSLATE_NOOP("form_widgets", "shrink"),
    },
    "expandable_segments": {
        "auto": QT_TRANSLATE_NOOP("form_widgets", "auto"),
        "off": QT_TRANSLATE_NOOP("form_widgets", "off"),
        "on": QT_TRANSLATE_NOOP("form_widgets", "on"),
    },
}


def choice_text(field: str, choice: str) -> str:
    """The text of `choice`'s item in `field`'s combo box, and how the window says that value elsewhere (the
    log's config line, the tooltip's list of choices)."""
    text = CHOICE_TEXTS.get(field, {}).get(choice)
    return choice if text is None else QCoreApplication.translate("form_widgets", text)


# values that are words, not names, where a message fills in a config field of that name ("synthetic", "resident"):
# said as the form's combo says them (choice_text)
WORD_VALUED_FIELDS = ("dataset", "placement", "amp", "on_oom", "attention")


def core_text(text: Any) -> str:
    """`text` in the user's language when it is a `Message`; otherwise as it is."""
    if isinstance(text, Message):
        params = {
            name: core_text(value) if isinstance(value, Message) else _field_value(name, value)
            for name, value in text.params.items()
        }
        translated = QCoreApplication.translate("", text.template)
        try:
            return translated.format(**params) if params else translated
        except (KeyError, IndexError, ValueError):
            return str(text)  # a translation that names a field the template lacks: English beats a crash
    return "" if text is None else str(text)


def _field_value(name: str, value: Any) -> Any:
    if name == "precision" and isinstance(value, str):
        return precision_text(value)
    if name not in WORD_VALUED_FIELDS or not isinstance(value, str):
        return value
    return choice_text(name, value)


def precision_text(value: str) -> str:
    """The `precision` a prediction's description names (gpu_train_monitor.engine.prediction,
    gpu_train_monitor.watch.step_prediction: "fp32", "bf16 autocast", "bfloat16 autocast", "no autocast") in the
    user's language: the dtype is a name, the words around it are the window's."""
    if value == "no autocast":
        return QCoreApplication.translate("core_text", "no autocast")
    dtype, space, word = value.rpartition(" ")
    if space and word == "autocast" and dtype and " " not in dtype:
        return QCoreApplication.translate("core_text", "{dtype} autocast").format(dtype=dtype)
    return value


def error_text(error: BaseException, with_field: bool = True) -> str:
    """A core error for people, translated. A `ConfigError` starts with the option it names ("batch_size:
    ..."), an identifier the user also sees in the CLI, unless `with_field` is False (the form's own
    inline message, beside the field)."""
    if isinstance(error, ConfigError):
        detail = core_text(error.detail)
        if not with_field:
            return detail
        return QCoreApplication.translate("core_text", "{field}: {detail}").format(field=error.field, detail=detail)
    return core_text(message_of(error))
