"""The step timeline predicted for a run's own step (gpu_train_monitor.engine.prediction.predict) against the same
step run for real on the CPU, counted at each phase end as the measured breakdown counts: within 2%."""

from __future__ import annotations

import pytest
import torch

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.engine.prediction import build_step, predict, step_input
from gpu_train_monitor.events.step_timeline import HOLDERS
from gpu_train_monitor.memory.phase_ends import measure_phase_ends
from gpu_train_monitor.model.models import build_model


@pytest.mark.parametrize(("model", "batch", "optimizer"), [("tiny-cnn", 32, "sgd"), ("resnet18", 4, "adamw")])
def test_predicted_phase_ends_are_within_2_percent_of_a_real_step(model: str, batch: int, optimizer: str) -> None:
    config = RunConfig(device="cpu", dataset="synthetic", model=model, batch_size=batch, optimizer=optimizer)
    predicted = predict(config).timeline.phase_ends()
    shape, classes = step_input(config, batch)
    cpu = torch.device("cpu")
    measured = measure_phase_ends(
        lambda: build_model(model, classes, shape[1]),
        lambda built: build_step(config, built, "cpu", shape, classes, cpu),
        shape,
        classes,
        device=cpu,
    ).phase_ends()
    assert [phase for phase, _ in predicted] == [phase for phase, _ in measured] == ["forward", "backward", "optimizer"]
    for (phase, guess), (_, real) in zip(predicted, measured):
        counted = guess.total_bytes - guess.temporaries_bytes  # a measured count has no temporaries
        assert counted == pytest.approx(real.total_bytes, rel=0.02), phase
        assert guess.grads_bytes == pytest.approx(real.grads_bytes, rel=0.02), phase
        assert guess.activations_bytes == pytest.approx(real.activations_bytes, rel=0.02, abs=1024), phase
    forward = dict(measured)["forward"]
    assert all(getattr(forward, holder) > 0 for holder in HOLDERS if holder not in ("grads_bytes", "temporaries_bytes"))
