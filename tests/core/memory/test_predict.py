"""A training step's peak memory predicted on fake tensors (gpu_train_monitor.memory.predict), checked against the same
step run for real and counted the same way, and against bytes worked out by hand for a model small enough to count.
"""

from __future__ import annotations

import time

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from gpu_train_monitor.memory.live_bytes import LiveBytes
from gpu_train_monitor.memory.predict import (
    Prediction,
    PredictionUnavailable,
    StepParts,
    measure_step,
    predict_step,
    trace_device,
)

F32, I64 = 4, 8
BATCH, CHANNELS, SIDE, HIDDEN, CLASSES = 32, 3, 8, 64, 10
PIXELS = CHANNELS * SIDE * SIDE


def mlp() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(PIXELS, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))


def sgd_step(model: nn.Module) -> StepParts:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(images: torch.Tensor, labels: torch.Tensor, marks: LiveBytes | None) -> object:
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(images), labels)
        if marks is not None:
            marks.mark("forward")
        loss.backward()
        if marks is not None:
            marks.mark("backward")
        optimizer.step()
        if marks is not None:
            marks.mark("optimizer")
        return loss

    return StepParts(model, optimizer, step)


SHAPE = (BATCH, CHANNELS, SIDE, SIDE)
PARAMS = (PIXELS * HIDDEN + HIDDEN + HIDDEN * CLASSES + CLASSES) * F32


def test_live_bytes_counts_a_storage_while_it_lives_and_a_view_once() -> None:
    with LiveBytes() as tracker:
        a = torch.empty(1000)
        view = a[:10]  # same storage: no more bytes
        b = torch.empty(500)
        del a, view
        c = torch.empty(100)
    assert tracker.peak == 1500 * F32
    assert tracker.now == 600 * F32
    del b, c
    assert tracker.now == 0


def test_prediction_of_a_small_network_matches_bytes_counted_by_hand() -> None:
    predicted = predict_step(mlp, sgd_step, SHAPE, CLASSES)
    assert predicted.method == "fake" and predicted.batch_size == BATCH
    assert predicted.params_bytes == PARAMS
    assert predicted.optimizer_bytes == PARAMS  # SGD's momentum: one buffer per parameter, held all along
    assert predicted.batch_bytes == BATCH * PIXELS * F32 + BATCH * I64
    parts = (
        predicted.params_bytes,
        predicted.grads_bytes,
        predicted.optimizer_bytes,
        predicted.batch_bytes,
        predicted.activations_bytes,
    )
    assert sum(parts) == predicted.peak_bytes
    assert 0 < predicted.grads_bytes <= PARAMS
    assert predicted.activations_bytes >= BATCH * HIDDEN * F32  # at least the hidden layer's output
    assert [phase for phase, _ in predicted.phase_peaks] == ["forward", "backward", "optimizer"]
    assert max(peak for _, peak in predicted.phase_peaks) == predicted.peak_bytes


def test_prediction_equals_the_same_step_measured_on_real_tensors() -> None:
    predicted = predict_step(mlp, sgd_step, SHAPE, CLASSES)
    measured = measure_step(mlp, sgd_step, SHAPE, CLASSES, device=torch.device("cpu"))
    assert measured.method == "measured"
    assert abs(predicted.peak_bytes - measured.peak_bytes) <= 0.10 * measured.peak_bytes
    assert predicted.params_bytes == measured.params_bytes
    assert predicted.optimizer_bytes == measured.optimizer_bytes


def test_a_batch_far_beyond_this_machine_is_predicted_without_using_memory() -> None:
    huge = (2_000_000, CHANNELS, SIDE, SIDE)  # its images alone: 1.5 GB; the step: several GB
    started = time.perf_counter()
    predicted = predict_step(mlp, sgd_step, huge, CLASSES, device_kind="cuda")
    assert predicted.batch_bytes == 2_000_000 * (PIXELS * F32 + I64)
    assert predicted.peak_bytes > predicted.batch_bytes + 2_000_000 * HIDDEN * F32
    assert predicted.device_kind == "cuda"
    assert predicted.traced_on == trace_device("cuda").type
    assert time.perf_counter() - started < 5


def test_overhead_outside_the_trace_adds_to_the_total() -> None:
    predicted = predict_step(mlp, sgd_step, SHAPE, CLASSES)
    assert predicted.overhead_bytes == 0 and predicted.total_bytes == predicted.peak_bytes
    with_context = predicted.with_overhead(500 << 20)
    assert isinstance(with_context, Prediction)
    assert with_context.total_bytes == predicted.peak_bytes + (500 << 20)


class PicksPositive(nn.Module):
    """Keeps the images whose first pixel is positive: how many depends on the values."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(PIXELS, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.flatten(1)
        chosen = torch.nonzero(flat[:, 0] > 0).flatten()
        return self.linear(flat).index_add(0, chosen, self.linear(flat[chosen]))


def test_a_step_whose_shapes_depend_on_the_data_is_unavailable_with_the_reason() -> None:
    with pytest.raises(PredictionUnavailable) as caught:
        predict_step(PicksPositive, sgd_step, SHAPE, CLASSES, what="picks-positive")
    reason = caught.value.reason
    assert reason.template.startswith("the memory of {what} cannot be predicted without running it")
    assert "picks-positive" in reason and "depends on the values in the batch" in reason
    assert "nonzero" in reason and "\n" not in reason
