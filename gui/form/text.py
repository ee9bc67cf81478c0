"""What the settings form says, in the user's language: field labels, help and tooltips, and errors
turned into one readable line.

The help is what `gpu_train_monitor.config.bounds.BOUNDS` says (the CLI's help, which stays English), in the form's
words: CLI options are named by their form labels. It is written here again as literals because Qt's
translation tools read literals only; a test keeps each English text equal to its bound's help.
"""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QLocale

from gpu_train_monitor.base.errors import ConfigError, UserError
from gpu_train_monitor.base.user_code import SPEC_FIELDS, SPEC_FORM
from gpu_train_monitor.config.bounds import BOUNDS
from gpu_train_monitor.gui.qt.core_text import choice_text, error_text
from gpu_train_monitor.gui.qt.locale_format import integer

LABELS = {
    "device": QT_TRANSLATE_NOOP("form_text", "Device"),
    "nproc": QT_TRANSLATE_NOOP("form_text", "Processes"),
    "sync_bn": QT_TRANSLATE_NOOP("form_text", "Sync BatchNorm"),
    "model": QT_TRANSLATE_NOOP("form_text", "Model"),
    "layers": QT_TRANSLATE_NOOP("form_text", "Layers"),
    "width": QT_TRANSLATE_NOOP("form_text", "Width"),
    "heads": QT_TRANSLATE_NOOP("form_text", "Attention heads"),
    "attention": QT_TRANSLATE_NOOP("form_text", "Attention"),
    "amp": QT_TRANSLATE_NOOP("form_text", "Mixed precision"),
    "channels_last": QT_TRANSLATE_NOOP("form_text", "channels_last"),
    "activation_checkpointing": QT_TRANSLATE_NOOP("form_text", "Activation checkpointing"),
    "expandable_segments": QT_TRANSLATE_NOOP("form_text", "Expandable segments"),
    "compile": QT_TRANSLATE_NOOP("form_text", "torch.compile"),
    "cudnn_benchmark": QT_TRANSLATE_NOOP("form_text", "cuDNN benchmark"),
    "fused_optimizer": QT_TRANSLATE_NOOP("form_text", "Fused optimizer"),
    "dataset": QT_TRANSLATE_NOOP("form_text", "Dataset"),
    "data_dir": QT_TRANSLATE_NOOP("form_text", "Data folder"),
    "download": QT_TRANSLATE_NOOP("form_text", "Download"),
    "synthetic_samples": QT_TRANSLATE_NOOP("form_text", "Synthetic samples"),
    "placement": QT_TRANSLATE_NOOP("form_text", "Placement"),
    "workers": QT_TRANSLATE_NOOP("form_text", "Workers"),
    "pin_memory": QT_TRANSLATE_NOOP("form_text", "pin_memory"),
    "non_blocking": QT_TRANSLATE_NOOP("form_text", "non_blocking"),
    "batch_size": QT_TRANSLATE_NOOP("form_text", "Batch size"),
    "seq_len": QT_TRANSLATE_NOOP("form_text", "Sequence length"),
    "epochs": QT_TRANSLATE_NOOP("form_text", "Epochs"),
    "max_steps": QT_TRANSLATE_NOOP("form_text", "Max steps"),
    "lr": QT_TRANSLATE_NOOP("form_text", "Learning rate"),
    "optimizer": QT_TRANSLATE_NOOP("form_text", "Optimizer"),
    "momentum": QT_TRANSLATE_NOOP("form_text", "Momentum"),
    "weight_decay": QT_TRANSLATE_NOOP("form_text", "Weight decay"),
    "seed": QT_TRANSLATE_NOOP("form_text", "Seed"),
    "on_oom": QT_TRANSLATE_NOOP("form_text", "On out of memory"),
    "report_interval": QT_TRANSLATE_NOOP("form_text", "Report every (s)"),
}
# what the lowest position of an optional number means (None in the config)
NONE_TEXT = {
    "epochs": QT_TRANSLATE_NOOP("form_text", "auto"),
    "max_steps": QT_TRANSLATE_NOOP("form_text", "no limit"),
    # a GPT's size: its preset's (gpt-tiny's, gpt-small's)
    "layers": QT_TRANSLATE_NOOP("form_text", "preset"),
    "width": QT_TRANSLATE_NOOP("form_text", "preset"),
    "heads": QT_TRANSLATE_NOOP("form_text", "preset"),
}

# BOUNDS[field].help in the form's words: {max_steps} and {epochs} are those fields' labels, {spec_form} is
# gpu_train_monitor.base.user_code.SPEC_FORM
HELP = {
    "device": QT_TRANSLATE_NOOP("form_text", "device to train on: auto, cpu, cuda, cuda:N or mps"),
    "model": QT_TRANSLATE_NOOP(
        "form_text",
        "auto (resnet18 on a GPU, tiny-cnn on a CPU; for text gpt-small on a GPU, gpt-tiny on a CPU), "
        "tiny-cnn, resnet18 (CIFAR stem), speedrun-net (a small fast CIFAR net), gpt-tiny or gpt-small (a "
        "GPT for text), any torchvision classifier name, or your own: {spec_form} (or "
        "path/to/file.py:factory), a callable returning an nn.Module (given num_classes= and "
        "in_channels= when it takes them)",
    ),
    "layers": QT_TRANSLATE_NOOP("form_text", "transformer blocks of a GPT model (default: its preset's)"),
    "width": QT_TRANSLATE_NOOP("form_text", "a GPT model's embedding width (default: its preset's)"),
    "heads": QT_TRANSLATE_NOOP("form_text", "a GPT model's attention heads (default: its preset's)"),
    "attention": QT_TRANSLATE_NOOP(
        "form_text",
        "a GPT model's attention: fused (scaled_dot_product_attention) or plain (the softmax of QK^T, "
        "masked: it holds each head's T x T scores)",
    ),
    "dataset": QT_TRANSLATE_NOOP(
        "form_text",
        "dataset to train on: synthetic-text and text:PATH (a text file, read as bytes) are text; or your "
        "own: a callable (path/to/file.py:factory works too) returning a map-style Dataset of (image tensor "
        "CxHxW, int label), or a (train, val) tuple or a {{'train', 'val'}} dict of them",
    ),
    "data_dir": QT_TRANSLATE_NOOP("form_text", "folder holding the dataset files (default: the user data folder)"),
    "download": QT_TRANSLATE_NOOP("form_text", "download the dataset into the data folder when it is missing"),
    "synthetic_samples": QT_TRANSLATE_NOOP(
        "form_text", "training samples generated for a synthetic dataset: images, or sequences for synthetic-text"
    ),
    "batch_size": QT_TRANSLATE_NOOP("form_text", "samples per training step: images, or sequences of text"),
    "seq_len": QT_TRANSLATE_NOOP("form_text", "tokens in each sequence of a text dataset (a sample is one sequence)"),
    "epochs": QT_TRANSLATE_NOOP(
        "form_text",
        'passes over the training set (default: 1, or as many as "{max_steps}" needs when that is '
        "given; with both, the run stops at whichever comes first)",
    ),
    "max_steps": QT_TRANSLATE_NOOP(
        "form_text",
        "train for this many steps, over as many epochs as that takes (default: one epoch; with "
        '"{epochs}" too, the run stops at whichever comes first)',
    ),
    "lr": QT_TRANSLATE_NOOP("form_text", "learning rate"),
    "optimizer": QT_TRANSLATE_NOOP("form_text", "optimizer"),
    "momentum": QT_TRANSLATE_NOOP("form_text", "SGD momentum"),
    "weight_decay": QT_TRANSLATE_NOOP("form_text", "weight decay"),
    "amp": QT_TRANSLATE_NOOP("form_text", "automatic mixed precision"),
    "channels_last": QT_TRANSLATE_NOOP("form_text", "use the channels_last memory format for the model and batches"),
    "activation_checkpointing": QT_TRANSLATE_NOOP(
        "form_text",
        "keep only each block's input for backward and run its forward again there: less activation memory "
        "for more compute (torch.utils.checkpoint over the model's blocks)",
    ),
    "expandable_segments": QT_TRANSLATE_NOOP(
        "form_text",
        "CUDA's caching allocator: on grows its segments in place instead of caching fixed blocks (less memory "
        "reserved but unused); auto keeps what PYTORCH_CUDA_ALLOC_CONF says (off when it says nothing); "
        "CUDA only",
    ),
    "compile": QT_TRANSLATE_NOOP(
        "form_text",
        "compile the model with torch.compile (its compile time is reported apart and left out of "
        "images/s; needs a C++ compiler on the CPU, Triton on CUDA)",
    ),
    "cudnn_benchmark": QT_TRANSLATE_NOOP(
        "form_text",
        "let cuDNN time its convolution algorithms and keep the fastest (CUDA only; pays off when "
        "batch shapes do not change)",
    ),
    "fused_optimizer": QT_TRANSLATE_NOOP(
        "form_text",
        "update all parameters in one fused kernel (on CUDA it also keeps fp16's gradient-scaler "
        "check on the device: no host sync per step)",
    ),
    "placement": QT_TRANSLATE_NOOP(
        "form_text",
        "where the data lives: stream (DataLoader) or resident (on the device); auto picks resident when it fits",
    ),
    "workers": QT_TRANSLATE_NOOP("form_text", "DataLoader worker processes (stream placement)"),
    "pin_memory": QT_TRANSLATE_NOOP("form_text", "pin host batches for faster copies to a GPU (stream placement)"),
    "non_blocking": QT_TRANSLATE_NOOP("form_text", "copy batches to the GPU asynchronously (stream placement)"),
    "seed": QT_TRANSLATE_NOOP("form_text", "random seed for data, model and shuffling"),
    "report_interval": QT_TRANSLATE_NOOP(
        "form_text", "seconds between progress reports (no host sync: the losses arrive a report later on a GPU)"
    ),
    "on_oom": QT_TRANSLATE_NOOP("form_text", "on out of memory: stop the run, or halve the batch and continue"),
    "nproc": QT_TRANSLATE_NOOP(
        "form_text",
        "processes training together, data-parallel (torch.distributed): one per GPU, or CPU "
        "processes where there is no GPU; batch_size is split evenly over them",
    ),
    "sync_bn": QT_TRANSLATE_NOOP(
        "form_text",
        "synchronise BatchNorm statistics across processes (nproc > 1): each step then normalises "
        "over the whole batch, as one process would",
    ),
}


def label(field: str) -> str:
    """The field's label in the form ("Batch size"); a name the form has no label for, as it reads."""
    if field in LABELS:
        return QCoreApplication.translate("form_text", LABELS[field])
    return field.replace("_", " ").capitalize()


def none_text(field: str) -> str:
    """What an optional number's lowest position shows ("auto", "no limit")."""
    text = NONE_TEXT.get(field, NONE_TEXT["max_steps"])
    return QCoreApplication.translate("form_text", text)


def field_help(field: str) -> str:
    """The bound's help as the form says it: CLI options ('--max-steps') named by their form labels."""
    return QCoreApplication.translate("form_text", HELP[field]).format(
        spec_form=SPEC_FORM, max_steps=label("max_steps"), epochs=label("epochs")
    )


def allowed_text(field: str) -> str:
    """What may be entered, as `gpu_train_monitor.config.field_checks.describe_range` says it, in the user's language
    and locale: 'an integer from 1 to 65536', 'one of sgd, adamw', and what an optional number's lowest position
    means."""
    bound = BOUNDS[field]
    if bound.choices:
        choices = ", ".join(choice_text(field, choice) for choice in bound.choices)
        if field == "dataset":
            return QCoreApplication.translate(
                "form_text", "one of {choices}, text:PATH (a text file), or {spec_form}"
            ).format(choices=choices, spec_form=SPEC_FORM)
        if field in SPEC_FIELDS:
            return QCoreApplication.translate("form_text", "one of {choices}, or {spec_form}").format(
                choices=choices, spec_form=SPEC_FORM
            )
        return QCoreApplication.translate("form_text", "one of {choices}").format(choices=choices)
    if bound.kind is bool:
        return QCoreApplication.translate("form_text", "true or false")
    if bound.kind is int and bound.minimum is not None:
        low, high = integer(int(bound.minimum)), integer(int(bound.maximum))
        if field in NONE_TEXT:
            return QCoreApplication.translate("form_text", "an integer from {low} to {high}, or {none}").format(
                low=low, high=high, none=none_text(field)
            )
        return QCoreApplication.translate("form_text", "an integer from {low} to {high}").format(low=low, high=high)
    if bound.kind is float and bound.minimum is not None:
        low, high = (QLocale().toString(float(v), "g", 6) for v in (bound.minimum, bound.maximum))
        return QCoreApplication.translate("form_text", "a number from {low} to {high}").format(low=low, high=high)
    return QCoreApplication.translate("form_text", "a string")


def field_tooltip(field: str) -> str:
    """Help and what may be entered: 'passes over the training set (...) (an integer from 1 to 10000, or auto)'."""
    return QCoreApplication.translate("form_text", "{help} ({allowed})").format(
        help=field_help(field), allowed=allowed_text(field)
    )


def friendly(exc: UserError) -> str:
    """'Batch size: must be ...' for a ConfigError of field batch_size: the form's label, then core's detail."""
    if isinstance(exc, ConfigError):
        return QCoreApplication.translate("form_text", "{label}: {detail}").format(
            label=label(exc.field), detail=error_text(exc, with_field=False)
        )
    return error_text(exc)
