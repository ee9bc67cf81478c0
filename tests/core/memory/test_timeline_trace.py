"""A traced step's memory over time (gpu_train_monitor.memory.timeline_trace): the timeline a prediction carries,
checked against the prediction's own peak and parts, against bytes counted by hand, and against a real step counted
at its phase ends the way the measured breakdown counts (gpu_train_monitor.memory.phase_ends).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from gpu_train_monitor.events.module_bytes import OUTSIDE
from gpu_train_monitor.events.step_timeline import HOLDERS
from gpu_train_monitor.memory.breakdown import SavedTensorCount
from gpu_train_monitor.memory.live_bytes import LiveBytes
from gpu_train_monitor.memory.module_context import ModuleContext
from gpu_train_monitor.memory.phase_ends import measure_phase_ends
from gpu_train_monitor.memory.predict import StepParts, predict_step
from gpu_train_monitor.memory.timeline_trace import TimelineTrace

F32, I64 = 4, 8
BATCH, PIXELS, HIDDEN, CLASSES = 32, 3 * 8 * 8, 64, 10
SHAPE = (BATCH, 3, 8, 8)
PARAMS = (PIXELS * HIDDEN + HIDDEN + HIDDEN * CLASSES + CLASSES) * F32


def mlp() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(PIXELS, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))


def sgd_step(model: nn.Module) -> StepParts:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=False)

    def step(images: torch.Tensor, labels: torch.Tensor, marks: LiveBytes | None) -> object:
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(images), labels)
        marks.mark("forward")
        loss.backward()
        marks.mark("backward")
        optimizer.step()
        marks.mark("optimizer")
        return loss

    return StepParts(model, optimizer, step)


def test_the_predicted_timeline_rises_in_forward_falls_in_backward_and_peaks_at_the_prediction() -> None:
    predicted = predict_step(mlp, sgd_step, SHAPE, CLASSES)
    timeline = predicted.timeline
    assert timeline.events > 10 and len(timeline.points) == timeline.events + 1
    assert [phase for phase, _ in timeline.phase_ends()] == ["forward", "backward", "optimizer"]
    assert [point.phase for point in timeline.points] == sorted(
        (point.phase for point in timeline.points), key=["forward", "backward", "optimizer"].index
    )
    assert timeline.peak is not None and timeline.peak.total_bytes == predicted.peak_bytes
    start, (_, forward), (_, backward), (_, optimizer) = timeline.points[0], *timeline.phase_ends()
    batch = BATCH * PIXELS * F32 + BATCH * I64
    assert (start.params_bytes, start.optimizer_bytes, start.batch_bytes) == (PARAMS, PARAMS, batch)
    assert start.grads_bytes == start.activations_bytes == start.temporaries_bytes == 0
    assert forward.grads_bytes == 0 and forward.activations_bytes == predicted.saved_activations_bytes
    assert backward.grads_bytes == PARAMS and backward.activations_bytes == 0
    assert optimizer.grads_bytes == PARAMS and optimizer.optimizer_bytes == PARAMS
    assert {point.module for point in timeline.points} >= {"1", "3", OUTSIDE}  # the two Linear layers, the loss


def test_a_long_trace_is_merged_to_the_bound_keeping_the_peak_and_the_phase_ends() -> None:
    model = nn.Linear(2, 2)
    tracker, saved, context = LiveBytes(), SavedTensorCount(), ModuleContext(model)
    trace = TimelineTrace(model, context, max_points=50)
    kept = []
    with tracker, trace.following(tracker, saved):
        for index in range(300):  # rises with a spike at 137, then falls
            kept.append(torch.empty(1000 if index == 137 else 10))
            if index == 150:
                tracker.mark("forward")
        while kept:
            kept.pop()
        tracker.mark("backward")
    timeline = trace.timeline({})
    assert timeline.events == 600 and len(timeline.points) <= 2 * 50
    totals = [point.total_bytes for point in timeline.points]
    assert max(totals) == (1000 + 299 * 10) * F32
    assert [point.total_bytes for _, point in timeline.phase_ends()] == [(1000 + 150 * 10) * F32, 0]
    assert [point.index for _, point in timeline.phase_ends()] == [151, 600]
    assert all(point.total_bytes == point.temporaries_bytes for point in timeline.points)


@pytest.mark.parametrize("foreach", [False, True])
def test_the_predicted_phase_ends_match_a_real_step_counted_as_the_breakdown_counts(foreach: bool) -> None:
    def step(model: nn.Module) -> StepParts:
        parts = sgd_step(model)
        parts.optimizer.defaults["foreach"] = foreach
        for group in parts.optimizer.param_groups:
            group["foreach"] = foreach
        return parts

    predicted = predict_step(mlp, step, SHAPE, CLASSES).timeline.phase_ends()
    measured = measure_phase_ends(mlp, step, SHAPE, CLASSES, device=torch.device("cpu")).phase_ends()
    assert [phase for phase, _ in predicted] == [phase for phase, _ in measured]
    for (_, guess), (_, real) in zip(predicted, measured):
        for holder in HOLDERS[:-1]:  # temporaries are not in a measured count
            assert getattr(guess, holder) == getattr(real, holder), holder
