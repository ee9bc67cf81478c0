"""The memory breakdown calls the memory what the device's is: on the CPU the process's (内存 in Chinese), on
a GPU the GPU's (显存). The English reads the same on both; the CPU's texts are translated apart."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QTranslator

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.gui.views.breakdown_view import BreakdownView

ON_CPU = "on the CPU: the process's memory"
TITLE = "Memory of one training step, by what holds it (sampled once per report)"
TABLE = {
    ("BreakdownView", "Memory breakdown", ""): "显存构成",
    ("BreakdownView", "Memory breakdown", ON_CPU): "内存构成",
    ("BreakdownView", TITLE, ""): "一个训练步的显存构成（每次报告采样一次）",
    ("BreakdownView", TITLE, ON_CPU): "一个训练步的内存构成（每次报告采样一次）",
}


class Catalogue(QTranslator):
    """A compiled catalogue's answers, disambiguation included (one English text, two translations)."""

    def translate(self, context, source, disambiguation=None, n=-1):  # noqa: ARG002 - Qt's signature
        return TABLE.get((context, source, disambiguation or ""))

    def isEmpty(self) -> bool:  # noqa: N802 - Qt's name
        return False


def test_the_breakdown_says_the_processs_memory_on_the_cpu_and_the_gpus_on_a_gpu(qtbot):
    translator = Catalogue()
    QCoreApplication.installTranslator(translator)
    try:
        view = BreakdownView()
        qtbot.addWidget(view)
        view.set_device_kind("cpu")
        assert (view.tab_title(), view.title.text()) == ("内存构成", "一个训练步的内存构成（每次报告采样一次）")
        view.set_device_kind("cuda")
        assert (view.tab_title(), view.title.text()) == ("显存构成", "一个训练步的显存构成（每次报告采样一次）")
    finally:
        QCoreApplication.removeTranslator(translator)
    assert view.tab_title() == "Memory breakdown"  # English: the same words on every device


def test_the_windows_memory_tab_follows_the_selected_device(make_window):
    translator = Catalogue()
    QCoreApplication.installTranslator(translator)
    try:
        window = make_window(RunConfig(device="cpu"))
        tab = window.parts.tabs.indexOf(window.parts.view.breakdown_view)
        assert window.parts.tabs.tabText(tab) == "内存构成"  # was 显存 (a GPU's memory) on the CPU
    finally:
        QCoreApplication.removeTranslator(translator)
