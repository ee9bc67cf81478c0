"""Where the window's parts go: the settings form fits its scroll area."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QScrollArea

from gpu_train_monitor.device.devices import DeviceInfo

LONG_CPU = DeviceInfo("cpu", "cpu", "AMD EPYC 7B13 64-Core Processor (2 threads) with a long name", 25_000_000_000)


def test_the_form_is_never_wider_than_its_scroll_area(window, qtbot):
    """The form ran under its scroll bar (the Preset arrow hidden) and Tab scrolled it sideways (labels cut):
    however long a device's name, the form fits beside the vertical scroll bar."""
    window.parts.form.set_devices([LONG_CPU])
    window.parts.main_splitter.setSizes([1, 2000])  # the column as narrow as the window lets it be
    QApplication.processEvents()
    scroll = window.parts.form.parentWidget().parentWidget()
    assert isinstance(scroll, QScrollArea)
    assert window.parts.form.width() <= scroll.viewport().width()
    preset = window.parts.form.preset_row
    assert preset.mapTo(window.parts.form, preset.rect().topRight()).x() < scroll.viewport().width()
    window.parts.form.widgets["report_interval"].setFocus()  # the last field: Tab and focus scroll it into view
    QApplication.processEvents()
    assert scroll.horizontalScrollBar().value() == 0


def test_the_step_time_tab_sits_beside_the_memory_breakdown_and_shows_a_live_run_s_reports(window, qtbot):
    from gpu_train_monitor.events.events import StepPhases, StepsReported
    from gpu_train_monitor.memory.probe import MemorySample

    tabs, view = window.parts.tabs, window.parts.view
    assert tabs.indexOf(view.step_time) == tabs.indexOf(view.breakdown_view) + 1
    assert tabs.tabText(tabs.indexOf(view.step_time)) == "Step time"
    tabs.setCurrentWidget(view.step_time)
    memory = MemorySample(1.0, "cpu", 10, 0, 10, 0, 1000, 100, 10, False)
    phases = StepPhases((0.06, 0.01, 0.01, 0.012, 0.004, 0.004), 0.1)
    view.show(StepsReported(20, 1, 11, (1.0,) * 10, 640, 100.0, 2.0, None, 32, memory, 100, (), phases))
    qtbot.waitUntil(lambda: view.step_time.bar_count() == 1)  # the run view's redraw throttle drew it
    assert view.step_time.verdict.text().startswith("input-bound")
