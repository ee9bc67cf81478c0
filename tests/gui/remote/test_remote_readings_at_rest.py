"""At rest, the memory plot shows the selected remote device's readings stream (the device watch asks the
connection for that device's readings); after a run has drawn its own memory there, the readings go on right
after it, not hours away on another clock. The GPU (NVML) tab shows that machine's device-wide readings."""

from __future__ import annotations

import numpy as np

from gpu_train_monitor.gui.remote.devices import remote_devices
from tests.gui.remote.fake_link import H200, sample


def reading(allocated: int, at: float) -> dict:
    return {"device": "cuda:0", "sample": sample("cuda:0", allocated), "nvml": None, "received_at": at}


def test_the_remote_gpus_readings_feed_the_memory_plot_at_rest(make_window):
    window = make_window()
    asked: list[str | None] = []
    window.parts.connection.watch_device = asked.append  # no machine behind it: what the watch asks for is seen
    window.parts.form.set_remote_devices(remote_devices("gpu-box", "gpu-box-7", [H200]))
    combo = window.parts.form.widgets["device"]
    combo.setCurrentIndex(combo.findData("cuda:0@gpu-box"))
    assert asked == ["cuda:0"]
    assert window.parts.device_watch.label.text() == "device: cuda:0 (NVIDIA H200) on gpu-box"
    assert window.probe is None  # nothing is measured here for it
    plot = window.parts.view.memory_plot
    for second, allocated in ((50_000.0, 1_000_000), (50_001.0, 2_000_000)):
        window.parts.connection.reading.emit(reading(allocated, second))
    assert len(plot.data) == 2 and list(plot.data.column(0)) == [0.0, 1.0]
    assert window.parts.view.stats.values["memory"].text() == "2.00 MB"  # the numbers under the form say it too

    plot.clear()  # a run's own memory, as a launched run's feed draws it: seconds since its start
    plot.seconds(0.0)
    plot.add_rows(np.array([[t, 5e6, 6e6, 5e6, 7e6, 1.5e11] for t in (0.0, 10.0, 20.0)]))
    window.parts.connection.reading.emit(reading(3_000_000, 60_000.0))
    window.parts.connection.reading.emit(reading(3_000_000, 60_001.0))
    assert list(plot.data.column(0))[-2:] == [21.0, 22.0]

    combo.setCurrentIndex(combo.findData("auto"))  # back to this machine: the stream is let go
    assert asked[-1] is None


NVML = {
    "used_bytes": 9_000_000_000,
    "total_bytes": 150_000_000_000,
    "utilization_percent": 87,
    "memory_utilization_percent": 40,
    "temperature_c": 61,
    "power_w": 412.0,
    "power_limit_w": 700.0,
    "processes": [{"pid": 4242, "name": "python", "used_bytes": 8_000_000_000}],
    "mig": False,
}


def test_the_gpu_tab_shows_the_remote_gpus_nvml_readings(make_window):
    window = make_window()
    window.parts.connection.watch_device = lambda spec: None
    window.parts.form.set_remote_devices(remote_devices("gpu-box", "gpu-box-7", [H200]))
    combo = window.parts.form.widgets["device"]
    combo.setCurrentIndex(combo.findData("cuda:0@gpu-box"))
    window.parts.connection.reading.emit({**reading(2_000_000, 1.0), "nvml": NVML})
    summary = window.parts.insight.nvml_panel.summary.text()
    assert summary.startswith("Device used 9.00 GB of 150.00 GB") and "87%" in summary and "61 °C" in summary
    window.parts.connection.reading.emit(reading(2_000_000, 2.0))  # no NVML there (no driver): said so
    assert (
        window.parts.insight.nvml_panel.summary.text()
        == "gpu-box has no NVML readings for cuda:0 (NVIDIA GPUs with a driver only)."
    )


def test_the_gpu_tab_shows_the_remote_allocators_cache_and_retries(make_window):
    window = make_window()
    window.parts.connection.watch_device = lambda spec: None
    window.parts.form.set_remote_devices(remote_devices("gpu-box", "gpu-box-7", [H200]))
    combo = window.parts.form.widgets["device"]
    combo.setCurrentIndex(combo.findData("cuda:0@gpu-box"))
    counted = {**reading(2_000_000, 1.0), "nvml": NVML}
    counted["sample"] = {**counted["sample"], "alloc_retries": 5, "allocator_ooms": 0}
    window.parts.connection.reading.emit(counted)
    cache = window.parts.insight.nvml_panel.cache.text()
    assert "2.00 MB reserved but not allocated" in cache and "5 allocation retries" in cache
    window.parts.connection.reading.emit({**reading(2_000_000, 2.0), "nvml": NVML})  # an older agent: no counts
    assert window.parts.insight.nvml_panel.cache.text() == ""
