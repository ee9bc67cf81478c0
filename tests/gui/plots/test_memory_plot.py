"""The memory plot: samples over time, CPU relabelling, markers for cache clears and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpu_train_monitor.events.events import MemorySample
from gpu_train_monitor.gui.plots.memory_plot import SERIES, MemoryPlot

GB = 1_000_000_000


def gpu_sample(t: float, allocated: int = 2 * GB, reserved: int = 3 * GB, used: int | None = 4 * GB) -> MemorySample:
    return MemorySample(t, "cuda:0", allocated, reserved, allocated, reserved, 16 * GB, used, GB // 2, True)


def cpu_sample(t: float, rss: int = GB) -> MemorySample:
    return MemorySample(t, "cpu", rss, 0, rss, 0, 64 * GB, 20 * GB, rss, False)


@pytest.fixture
def plot(qtbot) -> MemoryPlot:
    plot = MemoryPlot()
    qtbot.addWidget(plot)
    plot.resize(800, 400)
    plot.show()
    return plot


def legend_labels(plot: MemoryPlot) -> list[str]:
    return [label.text for _, label in plot.legend.items]


def drawn_y(plot: MemoryPlot, key: str) -> np.ndarray:
    return np.asarray(plot.curves[key].getData()[1])


def test_samples_are_plotted_against_seconds_since_the_first(plot):
    plot.add_sample(gpu_sample(100.0))
    plot.add_sample(gpu_sample(100.5, allocated=3 * GB))
    plot.add_sample(gpu_sample(102.0, used=None))  # NVML missing: a gap, not a zero
    assert plot.refresh()
    assert list(plot.data.column(0)) == [0.0, 0.5, 2.0]
    assert list(drawn_y(plot, "allocated")) == [2 * GB, 3 * GB, 2 * GB]
    assert list(drawn_y(plot, "capacity")) == [16 * GB] * 3
    used = drawn_y(plot, "device_used")
    assert used[0] == 4 * GB and math.isnan(used[2])
    assert plot.refresh() is False  # nothing new: no redraw


def test_gpu_labels_and_tooltips(plot):
    plot.add_sample(gpu_sample(0.0))
    assert plot.plot.getPlotItem().titleLabel.text == "Device memory, capacity 16.00 GB"
    assert legend_labels(plot) == [SERIES[k][1] for k in SERIES]
    assert "memory_allocated" in plot.toggles["allocated"].toolTip()
    assert not plot.toggles["reserved"].isHidden()


def test_the_cpu_plots_process_rss_against_system_memory(plot):
    plot.add_sample(cpu_sample(0.0))
    assert plot.plot.getPlotItem().titleLabel.text.startswith("Process memory (CPU), capacity ")
    assert plot.toggles["allocated"].text() == "process RSS"
    assert plot.toggles["capacity"].text() == "system memory"
    assert plot.toggles["device_used"].text() == "system used"
    assert "RSS" in plot.toggles["allocated"].toolTip()
    labels = legend_labels(plot)
    assert "process RSS" in labels and "system memory" in labels
    assert "reserved" not in labels  # the CPU has no caching allocator: no reserved curve
    assert plot.toggles["reserved"].isHidden() and not plot.curves["reserved"].isVisible()

    plot.add_sample(gpu_sample(1.0))  # a GPU run afterwards relabels back
    assert plot.toggles["allocated"].text() == "allocated"
    assert "reserved" in legend_labels(plot)
    assert plot.curves["reserved"].isVisible()


def test_series_toggles_hide_and_show_curves(plot):
    plot.add_sample(gpu_sample(0.0))
    plot.toggles["peak"].setChecked(False)
    assert not plot.curves["peak"].isVisible()
    assert plot.curves["allocated"].isVisible()
    plot.toggles["peak"].setChecked(True)
    assert plot.curves["peak"].isVisible()


def test_markers_for_cache_clears_and_errors(plot):
    plot.add_sample(gpu_sample(50.0))
    cleared = plot.add_marker(53.0, "cleared 1.00 GB")
    oom = plot.add_marker(55.0, "out of memory", error=True)
    assert cleared.value() == 3.0 and oom.value() == 5.0  # on the plot's time axis
    assert cleared.label.textItem.toPlainText() == "cleared 1.00 GB"
    assert cleared.toolTip() == "cleared 1.00 GB"
    assert cleared.pen.color().red() < cleared.pen.color().green()  # a clear is green
    assert oom.pen.color().red() == 200 and oom.pen.color().green() == 0  # an error is red
    items = plot.plot.getPlotItem().items
    assert cleared in items and oom in items
    plot.clear()
    assert plot.markers == [] and cleared not in plot.plot.getPlotItem().items
    assert len(plot.data) == 0
    plot.add_sample(gpu_sample(80.0))
    assert plot.data.last(0) == 0.0  # time restarts at the next run's first sample


def test_a_curve_shown_again_gets_the_samples_it_missed(plot):
    plot.add_sample(gpu_sample(0.0))
    plot.refresh()
    plot.toggles["peak"].setChecked(False)
    plot.add_sample(gpu_sample(1.0, allocated=5 * GB))
    plot.refresh()
    assert len(drawn_y(plot, "peak")) == 1  # hidden curves are not redrawn
    plot.toggles["peak"].setChecked(True)
    assert plot.refresh()
    assert list(drawn_y(plot, "peak")) == [2 * GB, 5 * GB]


def test_a_hidden_plot_is_not_redrawn_until_shown(plot):
    plot.add_sample(gpu_sample(0.0))
    plot.hide()
    assert plot.refresh() is False
    plot.show()
    assert plot.refresh() is True


def test_the_legend_is_above_the_data_and_a_marker_reads_whole(plot, qtbot):
    from PySide6.QtCore import QRectF

    for i in range(30):
        plot.add_sample(gpu_sample(50.0 + i, allocated=2 * GB + i * GB // 4))
    oom = plot.add_marker(52.0, "out of memory", error=True)  # near the left, where the legend sat
    plot.refresh()
    qtbot.wait(20)
    item = plot.plot.getPlotItem()
    view = item.getViewBox()
    data_area = view.mapRectToScene(view.boundingRect())
    legend = item.legend
    assert len(legend.items) == 5 and not legend.mapRectToScene(legend.boundingRect()).intersects(data_area)
    text = oom.label.textItem
    assert data_area.contains(text.mapRectToScene(QRectF(text.boundingRect())))  # not "out of merr"


def test_under_a_process_limit_the_cpu_capacity_is_that_limit_and_says_so(plot):
    """`ulimit -v 5000000`: the capacity line is the process's limit (as the finder's capacity), not the
    machine's memory, and its label, tooltip and the title say which limit it is."""
    limited = MemorySample(0.0, "cpu", GB, 0, GB, 0, 5_120_000_000, 20 * GB, GB, False, "RLIMIT_AS")
    plot.add_sample(limited)
    assert plot.plot.getPlotItem().titleLabel.text == "Process memory (CPU), capacity 5.12 GB (ulimit -v)"
    assert plot.toggles["capacity"].text() == "process limit" and "RLIMIT_AS" in plot.toggles["capacity"].toolTip()
    assert "process limit" in legend_labels(plot) and "system memory" not in legend_labels(plot)
    assert plot.refresh() and list(drawn_y(plot, "capacity")) == [5_120_000_000]
    plot.clear()
    plot.add_sample(cpu_sample(1.0))  # no limit (another run, another process): system memory again
    assert plot.toggles["capacity"].text() == "system memory" and "system memory" in legend_labels(plot)


def test_the_peak_line_holds_a_finished_run_s_peak_at_rest_until_the_next_run(plot):
    """The idle poll's probe did not watch the run: its readings must not pull the peak line below the
    run's peak (the log's and the Runs table's figure) once the run has ended."""
    plot.add_sample(cpu_sample(0.0, rss=3 * GB))  # the run's last report
    plot.hold_peak(int(3.5 * GB))  # its summary: validation after the last report went higher
    plot.add_sample(cpu_sample(1.0, rss=GB))  # the idle poll: the window's probe saw 1 GB at most
    assert plot.refresh()
    assert list(drawn_y(plot, "peak")) == [3 * GB, 3.5 * GB]
    assert plot.peak_of(cpu_sample(2.0, rss=4 * GB)) == 4 * GB  # a higher reading still shows
    plot.clear()  # the next run
    plot.add_sample(cpu_sample(3.0, rss=GB))
    assert plot.refresh() and list(drawn_y(plot, "peak")) == [GB]
