"""Where a step's time goes on CUDA: the GPU's own clock beside the host's (events at the phase boundaries, read once
done), how often the GPU waited for the host, and a verdict from them; a streamed run waits for its data longer than
a resident one."""

from __future__ import annotations

import pytest

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import STEP_PHASES, StepsReported

pytestmark = pytest.mark.gpu

RUN = RunConfig(
    device="cuda:0", model="resnet18", synthetic_samples=64 * 64, batch_size=64, max_steps=120, report_interval=0.1
)


def run(config: RunConfig) -> tuple[dict, list[StepsReported]]:
    reports: list[StepsReported] = []
    finished = TrainingSession(config, [lambda e: reports.append(e) if isinstance(e, StepsReported) else None]).run()
    assert finished.status == "completed", finished.message
    return finished.summary.to_dict(), reports


@pytest.mark.parametrize("placement", ["resident", "stream"])
def test_a_cuda_runs_phases_are_timed_on_the_gpu_too(placement: str) -> None:
    summary, reports = run(RUN.replace(placement=placement))
    device = summary["device_step_phases_s"]
    assert device is not None and set(device) == set(STEP_PHASES)
    assert device["forward"] > 0 and device["backward"] > 0 and device["optimizer"] > 0
    assert 0.0 <= summary["gpu_caught_up"] <= 1.0
    assert summary["verdict"] in ("input-bound", "host-bound", "compute-bound")
    timed = [r.phases for r in reports if r.phases is not None and r.phases.device_seconds is not None]
    assert len(timed) >= 2  # most reports carry the GPU's times of a step the GPU had finished by then
    # the GPU's step (its phases' sum) is the host's within a factor: both clocks see the same steps
    assert 0.3 < sum(device.values()) / summary["step_phases_s"]["step"] < 3.0


def test_a_streamed_run_waits_for_its_data_longer_than_a_resident_one_on_the_gpu() -> None:
    resident, _ = run(RUN.replace(placement="resident"))
    streamed, _ = run(RUN.replace(placement="stream", workers=0))
    data = lambda s: s["step_phases_s"]["data"] + s["step_phases_s"]["copy"]  # noqa: E731
    assert data(streamed) > data(resident)
