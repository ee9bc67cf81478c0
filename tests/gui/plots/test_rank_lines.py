"""Every rank of a data-parallel run in the window's live panels, fed the events rank 0 emits: memory lines per
rank on the memory plot (named in its legend), each rank's images/s under the total, and a rank choice on the
memory breakdown; an ordinary run shows none of it."""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pytest
from PySide6.QtCore import QLocale
from PySide6.QtWidgets import QVBoxLayout, QWidget

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.events.events import MemoryBreakdown, MemorySample, RankSample, RunStarted, StepsReported
from gpu_train_monitor.gui.plots.memory_plot import SERIES
from gpu_train_monitor.gui.plots.rank_series import RankLayout
from gpu_train_monitor.gui.views.run_view import RunView
from gpu_train_monitor.memory.probe import MemoryProbe

GB = 1_000_000_000
CONFIG = RunConfig(model="tiny-cnn", device="cpu", synthetic_samples=512, batch_size=64, max_steps=20)


def gpu_sample(t: float, device: str, allocated: int, used: int | None = 5 * GB) -> MemorySample:
    return MemorySample(
        t, device, allocated, allocated + GB, allocated + GB // 2, allocated + 2 * GB, 80 * GB, used, GB // 2, True
    )


def started(devices: tuple[str, ...], memory: MemorySample) -> RunStarted:
    return RunStarted(
        config=CONFIG.to_dict(),
        device=devices[0],
        device_name=devices[0],
        placement="stream",
        steps_per_epoch=8,
        total_steps=20,
        train_samples=512,
        val_samples=0,
        parameters=10_000,
        dataset_bytes=0,
        memory=memory,
        world_size=len(devices),
        rank_devices=devices if len(devices) > 1 else (),
    )


def report(step: int, ranks: tuple[RankSample, ...], memory: MemorySample) -> StepsReported:
    return StepsReported(
        step=step,
        epoch=1,
        first_step=step,
        losses=(2.0,),
        samples=64 * step,
        samples_per_s=sum(r.samples_per_s for r in ranks) or 2_408.0,
        elapsed_s=step * 0.1,
        eta_s=1.0,
        batch_size=64,
        memory=memory,
        total_steps=20,
        ranks=ranks,
    )


def breakdown(rank: int, params: int) -> MemoryBreakdown:
    return MemoryBreakdown(
        step=4,
        params_bytes=params,
        grads_bytes=params,
        optimizer_bytes=0,
        batch_bytes=1_000_000,
        activations_bytes=3_000_000,
        dataset_bytes=0,
        phase_peaks=(("forward", 5_000_000), ("backward", 6_000_000), ("optimizer", 7_000_000)),
        method="saved-tensors",
        rank=rank,
    )


@pytest.fixture(autouse=True)
def english_numbers():
    """Numbers as the window writes them for an English user (`gpu_train_monitor.gui.i18n.language` sets the locale; a
    test machine's C locale groups no digits)."""
    QLocale.setDefault(QLocale(QLocale.Language.English, QLocale.Country.UnitedStates))
    yield
    QLocale.setDefault(QLocale.system())


@pytest.fixture
def view(qtbot) -> RunView:
    view = RunView()
    view.redraw.stop()  # drawn by hand below
    host = QWidget()
    qtbot.addWidget(host)
    layout = QVBoxLayout(host)
    for widget in (view.memory_plot, view.stats, view.breakdown_view, view.step_time):
        layout.addWidget(widget)
    host.resize(900, 900)
    host.show()
    view.host = host  # type: ignore[attr-defined]  # kept alive with the view
    yield view
    view.stop()


def legend(view: RunView) -> list[str]:
    return [label.text for _, label in view.memory_plot.legend.items]


def drawn_y(curve) -> np.ndarray:
    return np.asarray(curve.getData()[1])


def curve_named(view: RunView, name: str):
    return next(curve for curve in view.memory_plot.ranks.curves if curve.name() == name)


def test_two_cpu_ranks_each_get_lines_images_per_second_and_a_breakdown(view):
    probe = MemoryProbe("cpu")
    view.reset(CONFIG)
    view.show(started(("cpu", "cpu"), probe.sample()))
    readings = []
    for step, (rate0, rate1) in ((4, (1_190.0, 1_180.0)), (8, (1_210.4, 1_198.0))):
        own = probe.sample()
        other = dataclasses.replace(
            probe.sample(),
            allocated_bytes=own.allocated_bytes + 64 * 10**6,
            peak_allocated_bytes=own.peak_allocated_bytes + 64 * 10**6,
        )
        readings.append((own, other))
        view.show(report(step, (RankSample(0, "cpu", rate0, own), RankSample(1, "cpu", rate1, other)), own))
    assert view.memory_plot.refresh()

    names = legend(view)
    assert names == [
        "rank 0 (cpu) RSS",
        "rank 0 (cpu) peak RSS",
        "rank 1 (cpu) RSS",
        "rank 1 (cpu) peak RSS",
        "system used",
        "system memory",
    ]  # no reserved on the CPU; the plot's own lines step aside
    assert len(view.memory_plot.ranks.curves) == 5
    assert not view.memory_plot.curves["allocated"].isVisible() and view.memory_plot.curves["capacity"].isVisible()
    assert list(drawn_y(curve_named(view, "rank 1 (cpu) RSS"))) == [other.allocated_bytes for _, other in readings]
    assert list(drawn_y(curve_named(view, "rank 0 (cpu) peak RSS"))) == [
        own.peak_allocated_bytes for own, _ in readings
    ]
    colours = {curve_named(view, f"rank {r} (cpu) RSS").opts["pen"].color().name() for r in (0, 1)}
    assert len(colours) == 2  # a colour per rank
    assert (
        curve_named(view, "rank 1 (cpu) peak RSS").opts["pen"].color().name()
        == curve_named(view, "rank 1 (cpu) RSS").opts["pen"].color().name()
    )

    assert view.stats.values["speed"].text() == "2,408"  # the run's total
    assert view.stats.rank_speed.text() == "1,210 · 1,198 img/s"
    assert not view.stats.rank_speed.isHidden() and not view.stats.rank_speed_title.isHidden()
    assert "rank 1 (cpu): 1,198 images/s" in view.stats.rank_speed.toolTip()

    box = view.breakdown_view.rank_box
    assert box.isVisibleTo(view.host) and [box.itemText(i) for i in range(box.count())] == [
        "rank 0 (cpu)",
        "rank 1 (cpu)",
    ]
    view.show(breakdown(0, 2_000_000))
    view.show(breakdown(1, 9_000_000))
    assert view.breakdown_view.last.rank == 0  # rank 0 shown until another is picked
    assert view.breakdown_view.value_labels["params_bytes"].text().startswith("2.00 MB")
    box.setCurrentIndex(1)
    assert view.breakdown_view.last.rank == 1
    assert view.breakdown_view.value_labels["params_bytes"].text().startswith("9.00 MB")
    assert "on rank 1 (cpu)" in view.breakdown_view.title.text()
    view.show(breakdown(0, 3_000_000))  # rank 0's next one waits until rank 0 is picked again
    assert view.breakdown_view.value_labels["params_bytes"].text().startswith("9.00 MB")
    box.setCurrentIndex(0)
    assert view.breakdown_view.value_labels["params_bytes"].text().startswith("3.00 MB")


def test_gpu_ranks_are_named_by_gpu_with_each_gpus_device_wide_use(view):
    t = time.monotonic()
    devices = ("cuda:0", "cuda:1")
    view.reset(CONFIG)
    view.show(started(devices, gpu_sample(t, "cuda:0", GB)))
    for i in range(3):
        zero, one = (
            gpu_sample(t + 1 + i, "cuda:0", (2 + i) * GB),
            gpu_sample(t + 1 + i, "cuda:1", (3 + i) * GB, used=None),
        )
        view.show(
            report(4 * (i + 1), (RankSample(0, "cuda:0", 1_000.0, zero), RankSample(1, "cuda:1", 990.0, one)), zero)
        )
    view.memory_plot.refresh()
    assert legend(view) == [
        "GPU 0 allocated",
        "GPU 0 reserved",
        "GPU 0 peak",
        "GPU 1 allocated",
        "GPU 1 reserved",
        "GPU 1 peak",
        "GPU 0 used (all processes)",
        "GPU 1 used (all processes)",
        "capacity",
    ]
    grid = view.memory_plot.legend.layout  # a rank's lines on one row: name and sample in a column pair
    assert [grid.itemAt(1, column).text for column in (1, 3, 5)] == ["GPU 1 allocated", "GPU 1 reserved", "GPU 1 peak"]
    assert list(drawn_y(curve_named(view, "GPU 1 reserved"))) == [4 * GB, 5 * GB, 6 * GB]
    assert list(drawn_y(curve_named(view, "GPU 0 used (all processes)"))) == [5 * GB] * 3
    assert all(math.isnan(y) for y in drawn_y(curve_named(view, "GPU 1 used (all processes)")))  # NVML unknown
    assert list(view.memory_plot.ranks.data.column(0)) == [1.0, 2.0, 3.0]  # rank 0's clock, the plot's seconds
    assert [view.breakdown_view.rank_box.itemText(i) for i in range(2)] == ["GPU 0", "GPU 1"]

    view.memory_plot.toggles["reserved"].setChecked(False)  # a kind's check box hides it for every rank
    assert not curve_named(view, "GPU 0 reserved").isVisible() and not curve_named(view, "GPU 1 reserved").isVisible()
    assert curve_named(view, "GPU 1 allocated").isVisible()
    view.memory_plot.toggles["reserved"].setChecked(True)
    assert curve_named(view, "GPU 1 reserved").isVisible()

    view.reset(CONFIG)  # the next run is an ordinary one: the plot's own lines again
    view.show(started(("cuda:0",), gpu_sample(t + 9, "cuda:0", GB)))
    assert legend(view) == [SERIES[key][1] for key in SERIES]
    assert view.memory_plot.ranks.curves == [] and view.memory_plot.curves["allocated"].isVisible()
    assert view.breakdown_view.rank_box.isHidden() and view.stats.rank_speed.isHidden()


def test_an_ordinary_run_shows_no_rank_ui(view):
    probe = MemoryProbe("cpu")
    view.reset(CONFIG)
    view.show(started(("cpu",), probe.sample()))
    view.show(report(4, (), probe.sample()))
    view.show(breakdown(0, 2_000_000))
    view.memory_plot.refresh()
    assert legend(view) == [SERIES[key][2] for key in SERIES if key != "reserved"]  # the CPU's own lines
    assert view.memory_plot.ranks.curves == [] and not view.memory_plot.ranks.active
    assert view.stats.rank_speed.isHidden() and view.stats.rank_speed_title.isHidden()
    assert view.breakdown_view.rank_box.isHidden() and view.breakdown_view.rank_label.isHidden()
    assert view.breakdown_view.last.rank == 0
    assert view.breakdown_view.title.text().startswith("Memory of one training step, by what holds it")


def test_ranks_not_announced_at_the_start_are_taken_from_the_reports(view):
    probe = MemoryProbe("cpu")
    view.reset(CONFIG)
    view.show(dataclasses.replace(started(("cpu",), probe.sample()), world_size=2))  # no rank_devices
    own = probe.sample()
    view.show(report(4, (RankSample(0, "cpu", 600.0, own), RankSample(1, "cpu", 610.0, own)), own))
    assert "rank 1 (cpu) RSS" in legend(view)
    assert view.stats.rank_speed.text() == "600 · 610 img/s"
    assert view.breakdown_view.rank_box.count() == 2


def test_eight_gpu_ranks_are_drawn_decimated_to_the_plots_width(view):
    """8 ranks x (3 lines + device used) over 100k reports: each line gets a few points per pixel column, from
    the buffer's block summaries, not a point per report."""
    devices = tuple(f"cuda:{i}" for i in range(8))
    layout = RankLayout(devices)
    reports = 100_000
    rows = np.empty((reports, layout.columns))
    rows[:, 0] = np.arange(reports) * 0.1
    rows[:, 1:] = np.random.default_rng(0).uniform(GB, 2 * GB, size=(reports, layout.columns - 1))
    view.memory_plot.add_sample(gpu_sample(0.0, "cuda:0", GB))
    view.memory_plot.seconds(0.0)
    view.memory_plot.add_rank_rows(devices, rows)
    assert len(view.memory_plot.ranks.curves) == 32
    assert view.memory_plot.refresh()
    width = view.memory_plot.plot.width()
    for curve in view.memory_plot.ranks.curves:
        assert len(drawn_y(curve)) <= 4 * max(width, 200) + 4
    column = 1 + [line.name for line in layout.lines()].index("GPU 7 peak")
    assert drawn_y(curve_named(view, "GPU 7 peak")).max() == rows[:, column].max()  # decimation keeps the peaks
