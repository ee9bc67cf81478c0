"""With the system set to Simplified Chinese, every text of the window is Chinese.

The window is built with the Chinese catalogue installed, a short run trains, and every text a user can
read is collected: labels, buttons, tooltips, tabs, combo items, placeholders, table headers, menus and
their actions, the log, plot titles, axis labels and legends. An English word left in any of them fails
the test with the text named: a string added to the code without `tr()` is caught here, even when
lupdate could not see it. Identifiers stay English in both languages (model and dataset names, option
values, device ids, units, product names), so they are allowed. A device's own name (the CPU's "Intel(R)
Xeon(R) Processor @ 2.60GHz", a GPU's) and the host's are the machine's, not the window's text: they are read
from core's device listing at test time and taken out of every text, whatever machine runs the test.
"""

from __future__ import annotations

import dataclasses
import re
import socket

import pyqtgraph as pg
import pytest
from tests.support.gui_support import FAST
from PySide6.QtCore import QLocale, Qt
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

import core.device.devices
import core.engine.session
from core.base.text import Message
from core.config.presets import PRESETS
from core.config.run_config import BOUNDS
from core.device.devices import list_devices
from core.model.models import available_models
from core.run.summary import RunSummary
from gui.i18n import language as i18n
from gui.views.window_state import WindowState
from gui.window.about import window_system_info

RUN_TIMEOUT_MS = 60_000
PRETEND_CPU = "Intel(R) Xeon(R) Processor @ 2.60GHz"  # another machine's CPU, as its /proc/cpuinfo names it
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.+\-/:]*")
PRODUCT_WORDS = {
    "GPU", "GPUs", "CPU", "CUDA", "MPS", "NVML", "NVIDIA", "AMP", "PyTorch", "torch", "torchvision", "cuDNN",
    "SQLite", "TensorBoard", "CSV", "JSON", "PNG", "SVG", "Qt", "PySide6", "pyqtgraph", "Python", "ID", "RSS",
    "MB", "GB", "TB", "kB", "B", "MiB", "GiB", "ms", "s", "x", "English", "DDP", "NCCL", "gloo", "OOM", "BatchNorm",
    "SyncBatchNorm", "EMA", "ETA", "pytorch.org", "memory_viz", "empty_cache", "pin_memory", "non_blocking",
    "channels_last", "torch.compile", "cuda", "cpu", "mps", "ImageNet", "CIFAR-10", "MNIST", "Fashion-MNIST",
    "ResNet", "nvidia-smi", "Ctrl", "Esc", "bf16", "fp16", "fp32", "tf32", "lr", "Adam", "AdamW", "SGD",
    "Triton", "DataLoader", "CIFAR", "cuBLAS", "airbench", "Linux", "macOS", "Windows", "Xvfb",
}


# choices that are words, not names: the window says them in the user's language (the config keeps them)
WORD_CHOICES = {"auto", "off", "synthetic", "stream", "resident", "stop", "shrink"}


def _allowed_words() -> set[str]:
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
        if (len(bare) < 2 or bare.lower() in allowed or any(c.isdigit() for c in bare)
                or any(c in bare for c in "_.:/")):  # identifiers: nn.Module, package.module:factory
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
            texts += [(f"{where} item tooltip", str(widget.itemData(i, Qt.ItemDataRole.ToolTipRole) or ""))
                      for i in range(widget.count())]
        elif isinstance(widget, QAbstractSpinBox):
            texts += [(f"{where} suffix", getattr(widget, "suffix", lambda: "")()),
                      (f"{where} special value", widget.specialValueText())]
        elif isinstance(widget, QTabWidget):
            texts += [(f"{where} tab", widget.tabText(i)) for i in range(widget.count())]
            texts += [(f"{where} tab tooltip", widget.tabToolTip(i)) for i in range(widget.count())]
        elif isinstance(widget, QPlainTextEdit | QTextEdit):
            texts += [(f"{where} line", line) for line in widget.toPlainText().splitlines()]
            texts.append((f"{where} placeholder", widget.placeholderText()))
        elif isinstance(widget, QAbstractItemView) and widget.model() is not None:
            model = widget.model()
            texts += [(f"{where} header", str(model.headerData(c, Qt.Orientation.Horizontal) or ""))
                      for c in range(model.columnCount())]
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
            texts += [("menu action", action.text()), ("menu action tooltip", action.toolTip()
                      if action.toolTip() != action.text().replace("&", "") else "")]
            if action.menu() is not None:
                menus.append(action.menu())
    for menu in root.findChildren(QMenu):
        texts += [("context menu action", action.text()) for action in menu.actions()]
    return [(where, text) for where, text in texts if text and text.strip()]


@pytest.fixture
def chinese(tmp_path, qapp):
    installed = i18n.install(i18n.CHINESE, cache=tmp_path / "qm", system=QLocale("zh_CN"))
    assert installed.language == i18n.CHINESE, installed.problem
    yield installed
    installed.remove()
    QLocale.setDefault(QLocale.system())


def _english_in(root: QWidget) -> list[str]:
    allowed, machine = _allowed_words(), machine_names()
    return sorted({f"{where}: {text!r} ({', '.join(words)})" for where, text in visible_texts(root)
                   if (words := english_words(text, allowed, machine))})


def test_every_text_of_the_window_is_chinese(chinese, make_window, qtbot):
    window = make_window()
    window.start_run(FAST)
    qtbot.waitUntil(lambda: window.state is WindowState.FINISHED, timeout=RUN_TIMEOUT_MS)
    english = _english_in(window)
    assert not english, f"{len(english)} English texts in the Chinese window:\n" + "\n".join(english)


def test_a_machine_whose_cpu_is_named_in_english_words_passes_too(chinese, make_window, qtbot, monkeypatch,
                                                                  tmp_path):
    """The CPU of another test machine calls itself "Intel(R) Xeon(R) Processor @ 2.60GHz": the device combo
    and the log name it so, and its words are the machine's, not English the window forgot to translate."""
    monkeypatch.setattr(core.device.devices, "cpu_name", lambda: PRETEND_CPU)  # the listing's (the device combo)
    monkeypatch.setattr(core.engine.session, "cpu_name", lambda: PRETEND_CPU)  # a run's device name (the log)
    # a store of this test's own: the pretend name must not reach a later test's stored runs
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUNS_DB", str(tmp_path / "runs.sqlite3"))
    window = make_window()
    window.start_run(FAST)
    qtbot.waitUntil(lambda: window.state is WindowState.FINISHED, timeout=RUN_TIMEOUT_MS)
    texts = visible_texts(window)
    assert any(PRETEND_CPU in text for where, text in texts if where.startswith("QComboBox#device item"))
    assert any(PRETEND_CPU in text for where, text in texts if where.endswith(" line"))
    english = _english_in(window)
    assert not english, f"{len(english)} English texts in the Chinese window:\n" + "\n".join(english)


def test_the_about_box_and_a_stored_run_are_chinese(chinese, make_window, qtbot, monkeypatch, tmp_path):
    # a store of this test's own: the stored run opened is this test's, not whichever the suite recorded first
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUNS_DB", str(tmp_path / "runs.sqlite3"))
    window = make_window()
    window.start_run(FAST)
    qtbot.waitUntil(lambda: window.state is WindowState.FINISHED, timeout=RUN_TIMEOUT_MS)
    window.menuBar().show_about()
    about = window.menuBar().about_box
    facts = window_system_info(window.torch_loaded).facts
    # versions and the names of software and hardware stay as they are; words (yes, none) are Messages
    allowed = _allowed_words() | {word.lower() for _, value in facts if not isinstance(value, Message)
                                  for word in WORD.findall(str(value))}
    english = [f"about: {text!r} ({words})" for text in (about.windowTitle(), about.text())
               if (words := english_words(text, allowed))]
    about.close()
    window.history.refresh()
    qtbot.waitUntil(lambda: window.history.model.rowCount() > 0, timeout=RUN_TIMEOUT_MS)
    view = window.history.open_run(window.history.model.rows[-1].id)
    qtbot.addWidget(view)
    qtbot.waitUntil(lambda: "\n" in view.findChild(QPlainTextEdit).toPlainText(), timeout=RUN_TIMEOUT_MS)
    english += _english_in(view)
    assert not english, f"{len(english)} English texts:\n" + "\n".join(english)


def test_the_checker_finds_english():
    allowed = _allowed_words()
    assert english_words("Clear cache", allowed) == ["Clear", "cache"]
    assert english_words("清空缓存（释放 1.2 MB，cuda:0，resnet18，/tmp/a b）", allowed) == []
    assert english_words("用 `gpu-train-monitor run` 开始的运行，nn.Module，'train'", allowed) == []
    assert english_words("窗口 GPU Training Monitor 已停止 training", allowed) == ["training"]
    assert english_words("Clear: cpu, path/to/file.py:factory", allowed) == ["Clear"]
    machine = [PRETEND_CPU]
    assert english_words(f"cpu：{PRETEND_CPU}（2 线程）", allowed, machine) == []
    assert english_words(f"开始：cpu 上的 tiny-cnn（{PRETEND_CPU}）Processor", allowed, machine) == ["Processor"]
