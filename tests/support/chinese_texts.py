"""What a Chinese reader of the window would trip over: every text a widget tree shows (labels, buttons,
tooltips, menus, plot titles, axes and legends), and the English words in a text that are not identifiers,
units, product names or this machine's names."""

from __future__ import annotations

import dataclasses
import re
import socket

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QTabWidget,
    QTextEdit,
    QWidget,
)

from gpu_train_monitor.base.text import Message
from gpu_train_monitor.config.bounds import BOUNDS
from gpu_train_monitor.config.presets import PRESETS
from gpu_train_monitor.device.devices import list_devices
from gpu_train_monitor.events.summary import RunSummary
from gpu_train_monitor.model.models import available_models

RUN_TIMEOUT_MS = 60_000

WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.+\-/:]*")

PRODUCT_WORDS = {
    "GPU",
    "GPUs",
    "CPU",
    "CUDA",
    "MPS",
    "NVML",
    "NVIDIA",
    "AMP",
    "PyTorch",
    "torch",
    "torchvision",
    "cuDNN",
    "SQLite",
    "TensorBoard",
    "CSV",
    "JSON",
    "PNG",
    "SVG",
    "Qt",
    "PySide6",
    "pyqtgraph",
    "Python",
    "ID",
    "RSS",
    "MB",
    "GB",
    "TB",
    "kB",
    "B",
    "MiB",
    "GiB",
    "ms",
    "s",
    "x",
    "English",
    "DDP",
    "NCCL",
    "gloo",
    "OOM",
    "BatchNorm",
    "SyncBatchNorm",
    "EMA",
    "ETA",
    "pytorch.org",
    "memory_viz",
    "empty_cache",
    "pin_memory",
    "non_blocking",
    "channels_last",
    "torch.compile",
    "cuda",
    "cpu",
    "mps",
    "ImageNet",
    "CIFAR-10",
    "MNIST",
    "Fashion-MNIST",
    "ResNet",
    "nvidia-smi",
    "Ctrl",
    "Esc",
    "bf16",
    "fp16",
    "fp32",
    "tf32",
    "lr",
    "Adam",
    "AdamW",
    "SGD",
    "Triton",
    "DataLoader",
    "CIFAR",
    "cuBLAS",
    "cudaMalloc",
    "airbench",
    "Linux",
    "macOS",
    "Windows",
    "Xvfb",
    "GPT",
    "Transformer",
    "softmax",
    "QK",
}

# choices that are words, not names: the window says them in the user's language (the config keeps them)
WORD_CHOICES = {"auto", "off", "synthetic", "stream", "resident", "stop", "shrink", "fused", "plain"}


def allowed_words() -> set[str]:
    words = set(PRODUCT_WORDS) | set(available_models())
    for bound in BOUNDS.values():
        words.update(bound.choices or ())
    words -= WORD_CHOICES
    words.update(option for name in BOUNDS for option in (name, name.replace("_", "-")))
    words.update(PRESETS)
    words.update(f.name for f in dataclasses.fields(RunSummary))  # a stored run's summary, by its JSON keys
    return {w.lower() for w in words}


def machine_names() -> list[str]:
    """The names this machine gives its devices and itself, longest first: the CPU's product name (inside the
    listing's "{cpu} ({threads} threads)" Message), each GPU's, the host's. They appear in the device combo,
    the log and a stored run as the machine reports them, in any language."""
    names = {socket.gethostname()}
    for device in list_devices(query_free=False):
        if isinstance(device.name, Message):  # words around the name are the window's: only the name goes
            names.update(value for value in device.name.params.values() if isinstance(value, str))
        else:
            names.add(device.name)
    return sorted((name for name in names if name.strip()), key=len, reverse=True)


def english_words(text: str, allowed: set[str], machine: list[str] | None = None) -> list[str]:
    """The English words of `text` a Chinese reader would trip over (identifiers and units are fine), the
    `machine`'s names (default: this machine's, `machine_names()`) left out."""
    for name in machine_names() if machine is None else machine:
        text = text.replace(name, " ")
    text = re.sub(r"<[^>]+>", " ", text)  # HTML tags
    text = text.replace("GPU Training Monitor", " ")  # the product's name
    text = re.sub(r"`[^`]*`|'[^'\s]*'|gpu-train-monitor(?: [a-z-]+)*", " ", text)  # commands and quoted values
    text = re.sub(r"&[a-z]+;|&(?=[A-Za-z])", "", text)  # entities and accelerators
    text = re.sub(r"\b\w+:\d+\b", " ", text)  # cuda:0
    text = re.sub(r"\b[a-z_]+=[\w.-]+", " ", text)  # setting=value, as a comparison is typed (placement=stream)
    found = []
    for word in WORD.findall(text):
        bare = word.strip(".-+_:/")
        if (
            len(bare) < 2 or bare.lower() in allowed or any(c.isdigit() for c in bare) or any(c in bare for c in "_.:/")
        ):  # identifiers: nn.Module, package.module:factory
            continue
        found.append(bare)
    return found


def _plot_texts(plot: pg.PlotItem) -> list[tuple[str, str]]:
    texts = [("plot title", plot.titleLabel.text or "")]
    for name in ("left", "bottom", "right"):
        axis = plot.getAxis(name) if name in plot.axes else None
        if axis is not None and axis.isVisible():
            texts.append((f"{name} axis", f"{axis.labelText} {axis.labelUnits}"))
    legend = plot.legend
    if legend is not None:
        texts += [("legend", label.text) for _, label in legend.items]
    return texts


def visible_texts(root: QWidget) -> list[tuple[str, str]]:
    """(where, text) for every text the user can read in `root`, its children and its menus."""
    texts: list[tuple[str, str]] = [("window title", root.windowTitle())]
    widgets = [root, *root.findChildren(QWidget)]
    for widget in widgets:
        where = type(widget).__name__ + (f"#{widget.objectName()}" if widget.objectName() else "")
        texts += [(f"{where} tooltip", widget.toolTip()), (f"{where} status tip", widget.statusTip())]
        if isinstance(widget, QLabel):
            texts.append((where, widget.text()))
        elif isinstance(widget, QAbstractButton):
            texts.append((where, widget.text()))
        elif isinstance(widget, QGroupBox):
            texts.append((where, widget.title()))
        elif isinstance(widget, QLineEdit):
            texts.append((f"{where} placeholder", widget.placeholderText()))
        elif isinstance(widget, QComboBox):
            texts += [(f"{where} item", widget.itemText(i)) for i in range(widget.count())]
            texts += [
                (f"{where} item tooltip", str(widget.itemData(i, Qt.ItemDataRole.ToolTipRole) or ""))
                for i in range(widget.count())
            ]
        elif isinstance(widget, QAbstractSpinBox):
            texts += [
                (f"{where} suffix", getattr(widget, "suffix", lambda: "")()),
                (f"{where} special value", widget.specialValueText()),
            ]
        elif isinstance(widget, QTabWidget):
            texts += [(f"{where} tab", widget.tabText(i)) for i in range(widget.count())]
            texts += [(f"{where} tab tooltip", widget.tabToolTip(i)) for i in range(widget.count())]
        elif isinstance(widget, QPlainTextEdit | QTextEdit):
            texts += [(f"{where} line", line) for line in widget.toPlainText().splitlines()]
            texts.append((f"{where} placeholder", widget.placeholderText()))
        elif isinstance(widget, QAbstractItemView) and widget.model() is not None:
            model = widget.model()
            texts += [
                (f"{where} header", str(model.headerData(c, Qt.Orientation.Horizontal) or ""))
                for c in range(model.columnCount())
            ]
        elif isinstance(widget, pg.PlotWidget):
            texts += [(f"{where} {what}", text) for what, text in _plot_texts(widget.getPlotItem())]
        elif isinstance(widget, pg.GraphicsLayoutWidget):
            for item in widget.ci.items:
                if isinstance(item, pg.PlotItem):
                    texts += [(f"{where} {what}", text) for what, text in _plot_texts(item)]
    menus = [action.menu() for action in root.menuBar().actions()] if hasattr(root, "menuBar") else []
    while menus:
        menu = menus.pop()
        texts.append(("menu", menu.title()))
        for action in menu.actions():
            texts += [
                ("menu action", action.text()),
                ("menu action tooltip", action.toolTip() if action.toolTip() != action.text().replace("&", "") else ""),
            ]
            if action.menu() is not None:
                menus.append(action.menu())
    for menu in root.findChildren(QMenu):
        texts += [("context menu action", action.text()) for action in menu.actions()]
    return [(where, text) for where, text in texts if text and text.strip()]


def english_in(root: QWidget) -> list[str]:
    allowed, machine = allowed_words(), machine_names()
    return sorted(
        {
            f"{where}: {text!r} ({', '.join(words)})"
            for where, text in visible_texts(root)
            if (words := english_words(text, allowed, machine))
        }
    )
