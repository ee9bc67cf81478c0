"""Allocation retries marked on the memory plot as a run's readings count them, one marker per 30 s at most."""

from __future__ import annotations

from gpu_train_monitor.events.events import MemorySample
from gpu_train_monitor.gui.views.run_view import RunView

GB = 10**9


def cuda(t: float, retries: int | None, device: str = "cuda:0") -> MemorySample:
    return MemorySample(t, device, GB, 2 * GB, GB, 2 * GB, 80 * GB, 3 * GB, GB, True, None, retries, 0)


def test_rising_retries_are_marked_with_how_many_and_no_more_than_one_per_30_s(qtbot) -> None:
    view = RunView()
    view.redraw.stop()
    qtbot.addWidget(view.memory_plot)
    qtbot.addWidget(view.step_time)
    for t, retries in ((100.0, 7), (101.0, 7), (102.0, 9), (110.0, 12), (131.0, 12), (140.0, 13)):
        view.show_sample(cuda(t, retries))
    labels = [(marker.value(), marker.label.format) for marker in view.memory_plot.markers]
    assert labels == [(2.0, "2 allocation retries"), (40.0, "4 allocation retries")]  # 7 -> 9, then 9 -> 13


def test_readings_without_counts_or_from_another_device_mark_nothing(qtbot) -> None:
    view = RunView()
    view.redraw.stop()
    qtbot.addWidget(view.memory_plot)
    qtbot.addWidget(view.step_time)
    view.show_sample(cuda(100.0, None))
    view.show_sample(cuda(101.0, 3))
    view.show_sample(cuda(102.0, 50, device="cuda:1"))  # a new baseline, not 47 retries
    view.show_sample(cuda(103.0, 1))  # lower: another process's count, a new baseline
    assert view.memory_plot.markers == []
