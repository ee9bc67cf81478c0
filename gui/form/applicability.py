"""Which of the form's settings apply to what else is chosen, and why not; also what `auto` stands for in the
model combo ("auto (tiny-cnn on this CPU)"). Plain functions of the values: the settings form shows the
answer on its widgets (greyed out, the reason as the tooltip), so the rules are tested without widgets.

Two kinds of "not here": a setting the run would ignore (pin_memory on the CPU) is greyed out and kept
(a greyed-out tick box shows unticked and is off in the config and the log, and its tick comes back when
it applies again);
a choice the device cannot run (fp16 on the CPU, cuDNN's autotuner off CUDA, torch.compile without a
compiler) is greyed out too, but when it is chosen anyway (saved settings, a preset, another device
picked after) it stays enabled so it can be undone, and the form's check refuses it inline with the
reason from `gpu_train_monitor.device.fast_paths`, which keeps Start disabled. fp16 on the CPU is the exception: the
form switches it off (autocast has no float16 there).

The process count (nproc) is labelled for what it counts here: "GPUs" on a CUDA device, "CPU processes"
elsewhere; sync_bn applies only with more than one. Expandable segments apply on CUDA only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from gpu_train_monitor.config.sequences import SIZE_FIELDS, SYNTHETIC_TEXT, is_gpt, is_text_dataset
from gpu_train_monitor.gui.form.text import field_tooltip
from gpu_train_monitor.gui.qt.core_text import core_text

FAST_PATHS = ("cudnn_benchmark", "compile", "fused_optimizer")
# a choice of a field, keyed as `gpu_train_monitor.device.fast_paths` keys its problems: "field=choice"
CHOICE_TOOLTIPS = {
    "amp=fp16": QT_TRANSLATE_NOOP("form_applicability", "float16 autocast + GradScaler"),
    "amp=bf16": QT_TRANSLATE_NOOP("form_applicability", "bfloat16 autocast (no gradient scaler needed)"),
}
# what the device (or the model) cannot run: chosen anyway, it stays enabled so it can be undone (fp16 is switched
# off instead)
KEPT_WHILE_CHOSEN = (*FAST_PATHS, "amp=bf16", "activation_checkpointing")
# why a setting is not used with what else is chosen: the tooltip of a greyed-out setting
NOT_USED = {
    "gpu_copies_only": QT_TRANSLATE_NOOP("form_applicability", "pin_memory only speeds up copies to a GPU"),
    "no_copy_on_cpu": QT_TRANSLATE_NOOP("form_applicability", "the CPU needs no copy to a device"),
    "stream_copies": QT_TRANSLATE_NOOP("form_applicability", "only the stream placement copies batches"),
    "resident_no_workers": QT_TRANSLATE_NOOP(
        "form_applicability", "the resident placement keeps the data on the device: no loader workers"
    ),
    "synthetic_only": QT_TRANSLATE_NOOP("form_applicability", "only the synthetic datasets are generated"),
    "text_only": QT_TRANSLATE_NOOP(
        "form_applicability", "only a text dataset (synthetic-text, text:PATH) is cut into sequences"
    ),
    "gpt_only": QT_TRANSLATE_NOOP("form_applicability", "only the GPT models (gpt-tiny, gpt-small) take these"),
    "text_file_named": QT_TRANSLATE_NOOP(
        "form_applicability", "a text dataset needs no data folder: a text file is named as text:PATH"
    ),
    "own_dataset_files": QT_TRANSLATE_NOOP("form_applicability", "your own dataset's factory finds its own files"),
    "synthetic_no_files": QT_TRANSLATE_NOOP("form_applicability", "the synthetic dataset needs no files"),
    "not_downloadable": QT_TRANSLATE_NOOP(
        "form_applicability", "only mnist, fashion-mnist and cifar10 can be downloaded"
    ),
    "adamw_no_momentum": QT_TRANSLATE_NOOP("form_applicability", "AdamW has no momentum setting"),
    "cuda_segments_only": QT_TRANSLATE_NOOP(
        "form_applicability", "only CUDA's caching allocator has segments to expand"
    ),
    "one_process": QT_TRANSLATE_NOOP(
        "form_applicability", "one process already normalises over its whole batch (set more than one process)"
    ),
}


def applicability(values: Mapping[str, Any], device_kind: str, problems: Mapping[str, Any]) -> dict[str, str | None]:
    """For each setting whose use depends on the others (and each "field=choice" the device may not run): why
    it does not apply, as its tooltip says it, or None where it applies.

    `values`: the form's values by field; `device_kind`: 'cpu', 'cuda' or 'mps' of the selected device;
    `problems`: the fast paths that device cannot run and why (`DeviceTable.problems_of`), and under
    "activation_checkpointing" why the model has nothing to checkpoint
    (`gpu_train_monitor.gui.form.checks.checkpointing_problem`)."""
    on_cpu = device_kind == "cpu"
    stream = values["placement"] != "resident"
    text = is_text_dataset(str(values["dataset"]))
    synthetic = values["dataset"] in ("synthetic", SYNTHETIC_TEXT)
    own = ":" in str(values["dataset"]) and not text  # your own dataset (package.module:factory) finds its own files
    model = str(values["model"])
    gpt = is_gpt(model) or (text and model == "auto")
    reasons = {
        "pin_memory": _not_used(not on_cpu and stream, "gpu_copies_only" if on_cpu else "stream_copies"),
        "non_blocking": _not_used(not on_cpu and stream, "no_copy_on_cpu" if on_cpu else "stream_copies"),
        "workers": _not_used(stream, "resident_no_workers"),
        "synthetic_samples": _not_used(synthetic, "synthetic_only"),
        "data_dir": _not_used(
            not synthetic and not own and not text,
            "own_dataset_files" if own else "text_file_named" if text and not synthetic else "synthetic_no_files",
        ),
        "seq_len": _not_used(text, "text_only"),
        "attention": _not_used(gpt, "gpt_only"),
        **{field: _not_used(gpt, "gpt_only") for field in SIZE_FIELDS},
        "download": _not_used(values["dataset"] in ("mnist", "fashion-mnist", "cifar10"), "not_downloadable"),
        "momentum": _not_used(values["optimizer"] == "sgd", "adamw_no_momentum"),
        "sync_bn": _not_used(int(values["nproc"]) > 1, "one_process"),
        "expandable_segments": _not_used(device_kind == "cuda", "cuda_segments_only"),
        "amp=fp16": QCoreApplication.translate("form_applicability", "fp16 autocast needs a CUDA or MPS device")
        if on_cpu
        else None,
        "amp=bf16": core_text(problems["amp=bf16"]) if "amp=bf16" in problems else None,
        "activation_checkpointing": core_text(problems["activation_checkpointing"])
        if "activation_checkpointing" in problems
        else None,
    }
    for field in FAST_PATHS:
        problem = problems.get(field)
        reasons[field] = (
            None
            if problem is None
            else QCoreApplication.translate("form_applicability", "Cannot run on this device: {problem}").format(
                problem=core_text(problem)
            )
        )
    return reasons


def shown_enabled(key: str, reason: str | None, values: Mapping[str, Any]) -> bool:
    """Whether the setting (or "field=choice") `key` stays enabled: it applies, or it is a choice the device
    cannot run that is chosen anyway (enabled so it can be undone)."""
    field, _, choice = key.partition("=")
    chosen = values[field] == choice if choice else bool(values[field])
    return reason is None or (key in KEPT_WHILE_CHOSEN and chosen)


def shown_tooltip(key: str, reason: str | None) -> str:
    """The tooltip of setting (or "field=choice") `key`: why it does not apply, else what it is."""
    if reason is not None:
        return reason
    if key in CHOICE_TOOLTIPS:
        return QCoreApplication.translate("form_applicability", CHOICE_TOOLTIPS[key])
    return field_tooltip(key)


def is_auto_model(text: str) -> bool:
    """'auto' as typed, or as the form shows it (in the user's language, '自动' in Chinese), once devices are
    known with what it stands for: 'auto (tiny-cnn on this CPU)' (in Chinese the parenthesis is the
    full-width one). No model name holds a parenthesis."""
    text = text.strip().lower()
    words = {"auto", QCoreApplication.translate("form_widgets", "auto").strip().lower()}
    return any(text == word or text.startswith((f"{word} (", f"{word}（")) for word in words)


def auto_model_text(device_kind: str | None, host: str | None = None, dataset: str = "") -> str:
    """'auto (tiny-cnn on this CPU)': the model a run would build on a device of `device_kind` (of the machine
    `host` when it is another one: 'auto (resnet18 on the GPU of gpu-box)') for `dataset` (a GPT for text); plain
    'auto' while the devices are not known (None)."""
    if device_kind is None:
        return QCoreApplication.translate("form_widgets", "auto")
    from gpu_train_monitor.model.models import resolve_model  # imports torch: called once the devices are known

    model = resolve_model("auto", device_kind, dataset)
    if host is not None:
        if device_kind == "cpu":
            return QCoreApplication.translate("form_applicability", "auto ({model} on the CPU of {host})").format(
                model=model, host=host
            )
        return QCoreApplication.translate("form_applicability", "auto ({model} on the GPU of {host})").format(
            model=model, host=host
        )
    if device_kind == "cpu":
        return QCoreApplication.translate("form_applicability", "auto ({model} on this CPU)").format(model=model)
    return QCoreApplication.translate("form_applicability", "auto ({model} on this GPU)").format(model=model)


def _not_used(applies: bool, reason: str) -> str | None:
    """None where the setting applies; else "Not used: " and the NOT_USED text of key `reason`."""
    if applies:
        return None
    why = QCoreApplication.translate("form_applicability", NOT_USED[reason])
    return QCoreApplication.translate("form_applicability", "Not used: {reason}").format(reason=why)
