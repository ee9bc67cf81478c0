"""A run asking for expandable segments off CUDA: it trains, says once that the setting changes nothing there,
and claims nothing about segments it did not read back (the CUDA side: tests/gpu/test_expandable_segments.py)."""

from __future__ import annotations

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import Event, LogMessage, RunStarted


def test_a_cpu_run_asking_for_them_logs_it_once_and_claims_nothing() -> None:
    events: list[Event] = []
    config = RunConfig(
        device="cpu", model="tiny-cnn", synthetic_samples=256, batch_size=32, max_steps=2, expandable_segments="on"
    )
    finished = TrainingSession(config, [events.append]).run()
    assert finished.status == "completed"
    notes = [e.text for e in events if isinstance(e, LogMessage) and "expandable segments" in e.text]
    assert notes == ["expandable segments change nothing on cpu: only CUDA's caching allocator has segments to expand"]
    assert next(e for e in events if isinstance(e, RunStarted)).config["expandable_segments"] == "on"
    assert finished.summary.expandable_segments is None  # read back only from CUDA's segments
