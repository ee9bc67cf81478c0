"""A stand-in for `gpu_train_monitor.remote.client.link.AgentLink` for the window's connection tests: what each attempt
to connect does is scripted (a hello, or an error), a drop is `drop()` (the next request raises ConnectionLost), and the
readings stream hands out what the test pushes. Thread-safe as the real link: the connection calls it from its
own thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from gpu_train_monitor.remote.client.failures import ConnectionLost, RemoteError

H200 = {
    "spec": "cuda:0",
    "kind": "cuda",
    "name": "NVIDIA H200",
    "capacity_bytes": 150_000_000_000,
    "free_bytes": 149_000_000_000,
    "used_bytes": 1_000_000_000,
}
CPU = {"spec": "cpu", "kind": "cpu", "name": "CPU (16 threads)", "capacity_bytes": 128_000_000_000}


class FakeAgent:
    """The machine behind the links: `attempts` lists what each connect does (an error to raise, or None for a
    hello); past its end every attempt succeeds."""

    def __init__(self, attempts: list[RemoteError | None] | None = None, devices: list[dict] | None = None) -> None:
        self.attempts = list(attempts or [])
        self.devices = devices if devices is not None else [CPU, H200]
        self.links: list[FakeLink] = []
        self.lock = threading.Lock()

    def __call__(self, target: Any) -> FakeLink:
        with self.lock:
            outcome = self.attempts.pop(0) if self.attempts else None
            link = FakeLink(self, target, outcome)
            self.links.append(link)
            return link

    @property
    def live(self) -> FakeLink | None:
        with self.lock:
            return next((link for link in reversed(self.links) if link.connected and not link.dropped), None)


class FakeLink:
    def __init__(self, agent: FakeAgent, target: Any, outcome: RemoteError | None) -> None:
        self.agent, self.target, self.outcome = agent, target, outcome
        self.connected = self.dropped = self.closed = False
        self.streams: dict[int, tuple[Callable[[dict], None], Callable[[str], None], dict]] = {}
        self._ids = 0
        self._latency: float | None = None

    def connect(self) -> dict:
        if self.outcome is not None:
            raise self.outcome
        self.connected = True
        return {"hello": True, "protocol": 1, "app": "9.9", "host": "gpu-box-7", "store": "/r.sqlite3", "schema": 1}

    def _check(self) -> None:
        if self.dropped or self.closed:
            raise ConnectionLost("the connection to gpu-box was lost")

    def request(self, op: str, **args: Any) -> dict:
        self._check()
        if op == "devices":
            return {"devices": self.agent.devices}
        return {}

    def stream(self, op: str, on_data: Callable[[dict], None], on_end: Callable[[str], None], **args: Any) -> int:
        self._check()
        self._ids += 1
        self.streams[self._ids] = (on_data, on_end, dict(op=op, **args))
        return self._ids

    def cancel(self, stream_id: int) -> None:
        self.streams.pop(stream_id, None)

    def ping(self) -> float:
        self._check()
        self._latency = 0.023
        return self._latency

    def latency_s(self) -> float | None:
        return self._latency

    def push_reading(self, allocated: int) -> None:
        """A readings line for every readings stream open (called from the test: another thread, as the real
        link's reader is)."""
        for on_data, _end, args in list(self.streams.values()):
            if args["op"] == "readings":
                on_data(
                    {"at": 1.0, "device": args["device"], "sample": sample(args["device"], allocated), "nvml": None}
                )

    def drop(self) -> None:
        self.dropped = True

    def close(self) -> None:
        self.closed = True


def sample(device: str, allocated: int) -> dict:
    return {
        "time_s": 123.0,
        "device": device,
        "allocated_bytes": allocated,
        "reserved_bytes": allocated * 2,
        "peak_allocated_bytes": allocated,
        "peak_reserved_bytes": allocated * 2,
        "capacity_bytes": 150_000_000_000,
        "device_used_bytes": allocated * 3,
        "process_rss_bytes": 1_000_000,
        "has_allocator": True,
        "capacity_limit": None,
    }
