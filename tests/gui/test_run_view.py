"""The run view's redraw timer: one plot per tick, the memory plot at most 5 times a second, nothing lost; the
config as the log shows it."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QVBoxLayout, QWidget

from core.memory import MemorySample
from core.config import RunConfig
from gui.run_view import MEMORY_REDRAW_INTERVAL_S, RunView, config_text

GB = 1_000_000_000


def sample(t: float, allocated: int = GB) -> MemorySample:
    return MemorySample(t, "cpu", allocated, 0, allocated, 0, 64 * GB, 20 * GB, allocated, False)


@pytest.fixture
def view(qtbot) -> RunView:
    view = RunView()
    view.redraw_timer.stop()  # the test ticks by hand, on a clock of its own
    now = [100.0]
    view.clock = lambda: now[0]
    view.now = now  # type: ignore[attr-defined]
    view.host = host = QWidget()  # type: ignore[attr-defined]  # kept alive with the view
    qtbot.addWidget(host)
    layout = QVBoxLayout(host)
    layout.addWidget(view.loss_plot)
    layout.addWidget(view.memory_plot)
    host.resize(800, 700)
    host.show()
    return view


def drawn(curve) -> int:
    x, _ = curve.getData()
    return 0 if x is None else len(x)


def test_one_plot_per_tick_and_the_other_on_the_next(view):
    view.loss_plot.add_losses(1, (2.0, 1.9))
    view.memory_plot.add_sample(sample(0.0))
    view._on_redraw_timer()
    assert (drawn(view.loss_plot.raw_curve), drawn(view.memory_plot.curves["allocated"])) == (2, 0)
    view._on_redraw_timer()
    assert drawn(view.memory_plot.curves["allocated"]) == 1


def test_the_memory_plot_waits_its_interval_then_draws_every_sample(view):
    view.memory_plot.add_sample(sample(0.0))
    view._on_redraw_timer()
    view._on_redraw_timer()
    assert drawn(view.memory_plot.curves["allocated"]) == 1
    for i in range(1, 4):  # three reports within the interval
        view.memory_plot.add_sample(sample(i * 0.05, allocated=(1 + i) * GB))
        view.now[0] += 0.05
        view._on_redraw_timer()
        view._on_redraw_timer()
    assert drawn(view.memory_plot.curves["allocated"]) == 1  # not redrawn yet
    view.now[0] += MEMORY_REDRAW_INTERVAL_S
    view._on_redraw_timer()
    view._on_redraw_timer()
    assert drawn(view.memory_plot.curves["allocated"]) == 4  # all the samples that waited


def test_the_logged_config_names_every_field_with_the_values_the_options_take():
    config = RunConfig(model="tiny-cnn", device="cpu", lr=3e-4, download=True, epochs=None).to_dict()
    text = config_text(config)
    fields = text.split(", ")
    assert [field.split("=", 1)[0] for field in fields] == list(config)  # every field, in order
    assert "model=tiny-cnn" in fields and "lr=0.0003" in fields
    assert "download=yes" in fields and "channels_last=no" in fields and "epochs=not set" in fields
