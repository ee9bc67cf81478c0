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

from PySide6.QtWidgets import QPlainTextEdit

import gpu_train_monitor.device.devices
from gpu_train_monitor.base.text import Message
from gpu_train_monitor.gui.views.window_state import WindowState
from gpu_train_monitor.gui.window.about import window_system_info
from tests.support.chinese_texts import RUN_TIMEOUT_MS, WORD, allowed_words, english_in, english_words, visible_texts
from tests.support.gui_support import FAST

PRETEND_CPU = "Intel(R) Xeon(R) Processor @ 2.60GHz"  # another machine's CPU, as its /proc/cpuinfo names it


def test_every_text_of_the_window_is_chinese(chinese, make_window, qtbot):
    window = make_window()
    window.start_run(FAST)
    qtbot.waitUntil(lambda: window.state is WindowState.FINISHED, timeout=RUN_TIMEOUT_MS)
    english = english_in(window)
    assert not english, f"{len(english)} English texts in the Chinese window:\n" + "\n".join(english)


def test_a_machine_whose_cpu_is_named_in_english_words_passes_too(chinese, make_window, qtbot, monkeypatch, tmp_path):
    """The CPU of another test machine calls itself "Intel(R) Xeon(R) Processor @ 2.60GHz": the device combo
    and the log name it so, and its words are the machine's, not English the window forgot to translate."""
    # the listing's (the device combo) and a run's device name (the log), both from gpu_train_monitor.device.devices
    monkeypatch.setattr(gpu_train_monitor.device.devices, "cpu_name", lambda: PRETEND_CPU)
    # a store of this test's own: the pretend name must not reach a later test's stored runs
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUNS_DB", str(tmp_path / "runs.sqlite3"))
    window = make_window()
    window.start_run(FAST)
    qtbot.waitUntil(lambda: window.state is WindowState.FINISHED, timeout=RUN_TIMEOUT_MS)
    texts = visible_texts(window)
    assert any(PRETEND_CPU in text for where, text in texts if where.startswith("QComboBox#device item"))
    assert any(PRETEND_CPU in text for where, text in texts if where.endswith(" line"))
    english = english_in(window)
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
    allowed = allowed_words() | {
        word.lower() for _, value in facts if not isinstance(value, Message) for word in WORD.findall(str(value))
    }
    english = [
        f"about: {text!r} ({words})"
        for text in (about.windowTitle(), about.text())
        if (words := english_words(text, allowed))
    ]
    about.close()
    window.parts.history.refresh()
    qtbot.waitUntil(lambda: window.parts.history.model.rowCount() > 0, timeout=RUN_TIMEOUT_MS)
    view = window.parts.history.open_run(window.parts.history.model.rows[-1].id)
    qtbot.addWidget(view)
    qtbot.waitUntil(lambda: "\n" in view.findChild(QPlainTextEdit).toPlainText(), timeout=RUN_TIMEOUT_MS)
    english += english_in(view)
    assert not english, f"{len(english)} English texts:\n" + "\n".join(english)


def test_the_checker_finds_english():
    allowed = allowed_words()
    assert english_words("Clear cache", allowed) == ["Clear", "cache"]
    assert english_words("清空缓存（释放 1.2 MB，cuda:0，resnet18，/tmp/a b）", allowed) == []
    assert english_words("用 `gpu-train-monitor run` 开始的运行，nn.Module，'train'", allowed) == []
    assert english_words("窗口 GPU Training Monitor 已停止 training", allowed) == ["training"]
    assert english_words("Clear: cpu, path/to/file.py:factory", allowed) == ["Clear"]
    machine = [PRETEND_CPU]
    assert english_words(f"cpu：{PRETEND_CPU}（2 线程）", allowed, machine) == []
    assert english_words(f"开始：cpu 上的 tiny-cnn（{PRETEND_CPU}）Processor", allowed, machine) == ["Processor"]
