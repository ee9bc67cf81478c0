"""The client of a job on another machine, with a scripted link: a search stopped while its machine stays silent
asks the job to stop and gives up waiting for its end after a grace (a window closing never hangs on a dead
connection); a job's error end comes back as the error it was there; the plan shown before the remote's own."""

from __future__ import annotations

import time
from typing import Any

import pytest

from gpu_train_monitor.base.errors import ConfigError, UserError
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.remote.client import jobs as remote_jobs
from gpu_train_monitor.remote.client.failures import RemoteError
from gpu_train_monitor.remote.client.jobs import RemoteComparison, device_type, remote_find_batch_size
from gpu_train_monitor.remote.client.target import RemoteTarget

TARGET = RemoteTarget.parse("gpu-box")


class SilentLink:
    """Connects, starts jobs and takes controls; its journal stream never says a word."""

    requests: list[tuple[str, dict[str, Any]]] = []

    def __init__(self, target: RemoteTarget) -> None:
        self.target, self.alive, self.hello, self.host_name = target, False, {"host": "gpu-box-7"}, "gpu-box-7"
        self.end_messages: dict[int, str] = {}
        self.failure = None

    def connect(self) -> dict[str, Any]:
        self.alive = True
        return self.hello

    def request(self, op: str, **args: Any) -> dict[str, Any]:
        SilentLink.requests.append((op, args))
        return {"uid": "job1", "pid": 4242, "started_at": 1.0} if op in ("find", "compare") else {}

    def stream(self, op: str, on_data: Any, on_end: Any, **args: Any) -> int:
        return 7

    def cancel(self, stream_id: int) -> None:
        pass

    def ping(self, timeout_s: float | None = None) -> float:
        return 0.01

    def close(self) -> None:
        self.alive = False


def test_a_search_stopped_while_its_machine_is_silent_gives_up_after_the_grace(monkeypatch) -> None:
    monkeypatch.setattr(remote_jobs, "STOP_GRACE_S", 0.5)
    SilentLink.requests = []
    started = time.monotonic()
    with pytest.raises(RemoteError, match="not followed to its end"):
        remote_find_batch_size(
            TARGET, RunConfig(device="cpu"), should_stop=lambda: True, link_factory=SilentLink, capacity=10**9
        )
    assert time.monotonic() - started < 5
    assert ("find", {"config": RunConfig(device="cpu").to_dict(), "predict": True, "capacity": 10**9}) in (
        SilentLink.requests
    )
    assert ("control", {"uid": "job1", "control": "stop"}) in SilentLink.requests


def test_a_jobs_error_end_is_raised_as_it_was_raised_there() -> None:
    with pytest.raises(ConfigError) as raised:
        remote_jobs._result({"error": "configuration 2 (device=cuda:7): no such device", "field": "vs"})
    assert raised.value.field == "vs" and "cuda:7" in str(raised.value)
    with pytest.raises(UserError, match="the batch-size search was stopped"):
        remote_jobs._result({"error": "the batch-size search was stopped", "field": None, "user_error": True})
    with pytest.raises(RemoteError, match="it failed there: RuntimeError: boom"):
        remote_jobs._result({"error": "RuntimeError: boom", "field": None, "user_error": False})


def test_the_plan_is_shown_at_once_with_the_model_auto_stands_for_on_that_device() -> None:
    base = RunConfig(device="cuda:0", model="auto", max_steps=30)
    comparison = RemoteComparison(TARGET, base, [{"amp": "off"}, {"amp": "bf16"}], link_factory=SilentLink)
    assert [c.label for c in comparison.contenders] == ["amp off", "amp bf16"] and comparison.steps == 30
    assert comparison.contenders[0].config.model == "resnet18"
    assert comparison.base.model == "auto"  # what is sent: the remote resolves it with its own devices
    assert [device_type(spec) for spec in ("cuda:1", "mps", "cpu", "auto")] == ["cuda", "mps", "cpu", "cpu"]
