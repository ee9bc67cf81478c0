"""After a run of another process that the window showed from the run store (a watched script, here its recorded
run), the window at rest: its memory plot goes on from the run's last sample on the run's clock, not at the
machine's uptime ("time (ks)") with a line across the gap; the run's numbers keep the run's memory beside its steps,
not the window's own process's readings. One run, one clock."""

from __future__ import annotations

import numpy as np

from gpu_train_monitor.base.text import format_bytes
from gpu_train_monitor.store.run_store import RunStore
from tests.support.watched_loops import record_watched_loop

STEPS = 30


def test_the_window_at_rest_goes_on_from_a_watched_runs_clock_and_keeps_its_numbers(
    make_window, qtbot, monkeypatch, tmp_path
):
    path = tmp_path / "runs.sqlite3"
    monkeypatch.setenv("GPU_TRAIN_MONITOR_RUNS_DB", str(path))
    run_id = record_watched_loop(path, STEPS)  # as a watched script's run is
    window = make_window()
    window.parts.device_watch.timer.stop()  # the idle poll is driven below, once the run is shown
    window.parts.view.reset_watched()  # File ▸ Watch a script… starts so
    feed = window.parts.launched.feed
    feed.follow(run_id)  # the run's own records, as the window follows its process
    feed.finish()
    plot = window.parts.view.memory_plot
    run_x = np.array(plot.data.column(0))
    with RunStore(path, readonly=True) as store:
        last = store.reports(run_id)[-1]
    shown = (window.parts.view.stats.values["memory"].text(), window.parts.view.stats.values["peak"].text())
    assert shown[0] == format_bytes(last.allocated_bytes) and len(run_x) > 1

    for _ in range(3):  # the window at rest: its idle poll reads its own process
        window.parts.device_watch._on_poll()
    x = np.array(plot.data.column(0))
    assert len(x) == len(run_x) + 3
    assert np.all(np.diff(x) >= 0)  # one clock: no sample goes back in time
    assert x[len(run_x)] - run_x[-1] < 1.0  # straight after the run's last sample, not at the machine's uptime
    assert x[-1] < run_x[-1] + 5.0
    plot.refresh()
    qtbot.wait(50)
    assert "ks" not in plot.plot.getPlotItem().getAxis("bottom").labelString()  # still seconds
    # the numbers beside the run's steps are still the run's, not the window's own memory
    assert (window.parts.view.stats.values["memory"].text(), window.parts.view.stats.values["peak"].text()) == shown
