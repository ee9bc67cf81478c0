"""The readings stream: a device's memory sample and NVML's view of the whole GPU, about once an interval, as
lines the protocol can carry (a GPU's status has nested processes), and a device that cannot be read said so."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from gpu_train_monitor.device import nvml
from gpu_train_monitor.events.events import MemorySample
from gpu_train_monitor.memory import probe
from gpu_train_monitor.remote.agent.streams import readings_stream
from gpu_train_monitor.remote.wire import protocol


class FakeStream:
    """What readings_stream uses of a stream: it takes `wanted` data lines, then is cancelled."""

    def __init__(self, wanted: int) -> None:
        self.wanted = wanted
        self.lines: list[dict[str, Any]] = []
        self.ended: tuple[str, str] | None = None
        self.stop = threading.Event()
        self.waits: list[float] = []

    def data(self, data: dict[str, Any]) -> bool:
        self.lines.append(protocol.decode(protocol.encode(data)))  # what crosses the pipe
        if len(self.lines) >= self.wanted:
            self.stop.set()
        return True

    def wait(self, seconds: float) -> bool:
        self.waits.append(seconds)
        return self.stop.is_set()

    def end(self, reason: str, message: str = "") -> None:
        self.ended = (reason, message)


class FakeCudaProbe:
    def __init__(self, device: str) -> None:
        import torch

        self.device = torch.device(device)

    def sample(self) -> MemorySample:
        return MemorySample(1.0, str(self.device), 10, 20, 30, 40, 80_000, 50_000, 900, True)


def test_a_cpu_reading_has_the_sample_and_no_nvml() -> None:
    stream = FakeStream(wanted=2)
    readings_stream(stream, "cpu", 0.5)  # type: ignore[arg-type]
    assert len(stream.lines) == 2 and stream.waits == [0.5, 0.5]
    line = stream.lines[0]
    assert line["device"] == "cpu" and line["nvml"] is None and line["at"] > 1e9
    assert line["sample"]["capacity_bytes"] > 0 and line["sample"]["has_allocator"] is False
    assert stream.ended == ("cancelled", "")


def test_a_gpu_reading_carries_nvml_with_its_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    status = nvml.GpuStatus(50_000, 80_000, 97, 40, 61, 350.5, 700.0, (nvml.GpuProcess(4242, "python", 30_000),))
    monkeypatch.setattr(probe, "MemoryProbe", FakeCudaProbe)
    asked: list[int] = []
    monkeypatch.setattr(nvml, "status", lambda index: asked.append(index) or status)
    stream = FakeStream(wanted=1)
    readings_stream(stream, "cuda:1", 1.0)  # type: ignore[arg-type]
    (line,) = stream.lines
    assert asked == [1]
    assert line["sample"]["allocated_bytes"] == 10 and line["sample"]["device_used_bytes"] == 50_000
    assert line["nvml"]["utilization_percent"] == 97
    assert line["nvml"]["processes"] == [{"pid": 4242, "name": "python", "used_bytes": 30_000}]


def test_a_device_that_cannot_be_read_ends_the_stream_saying_which() -> None:
    stream = FakeStream(wanted=1)
    readings_stream(stream, "tpu:9", 1.0)  # type: ignore[arg-type]
    assert stream.lines == []
    assert stream.ended is not None and stream.ended[0] == "error" and "tpu:9" in stream.ended[1]
