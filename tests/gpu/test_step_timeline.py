"""The step's memory timeline measured on CUDA from the allocator's history, recorded for the attributed step only:
phases in order, the weights and optimizer state all along, gradients by the end, activations rising in forward,
the peak equal to the step's allocator peak within the allocator's rounding, and recording off again after it.
Skipped without CUDA."""

from __future__ import annotations

import pytest
import torch

from gpu_train_monitor.memory.breakdown import StepMemoryRecorder, grads_bytes, optimizer_bytes, params_bytes
from gpu_train_monitor.memory.probe import MemoryProbe
from gpu_train_monitor.model.models import build_model
from gpu_train_monitor.model.step import TrainingStep, build_optimizer

pytestmark = pytest.mark.gpu


def test_the_attributed_cuda_step_has_a_measured_timeline_and_recording_stops_after_it() -> None:
    device = torch.device("cuda", torch.cuda.current_device())
    torch.manual_seed(0)
    model = build_model("resnet18", 10, 3).to(device)
    optimizer = build_optimizer(model, "sgd", lr=0.01, momentum=0.9, weight_decay=0.0)
    trainer = TrainingStep(model, optimizer, torch.amp.GradScaler("cuda", enabled=False), "cuda", None)
    recorder = StepMemoryRecorder(MemoryProbe(str(device)))
    images = torch.randn(64, 3, 32, 32, device=device)
    labels = torch.randint(0, 10, (64,), device=device)
    breakdowns = []
    for step in (1, 2):  # the second sampled step is attributed: its timeline is recorded
        with recorder.step():
            trainer.step(images, labels, recorder)
        breakdowns.append(recorder.breakdown(step, model, optimizer, images, labels))
    torch.cuda.synchronize()
    first, second = breakdowns
    assert first.timeline.points == () and second.modules
    timeline = second.timeline
    assert timeline.events > 100 and len(timeline.points) > 10
    assert [phase for phase, _ in timeline.phase_ends()] == ["forward", "backward", "optimizer"]
    start, end = timeline.points[0], timeline.points[-1]
    assert start.params_bytes == params_bytes(model) and start.grads_bytes == 0
    assert end.optimizer_bytes == optimizer_bytes(optimizer, device)
    assert end.grads_bytes == grads_bytes(model)
    for phase in ("forward", "backward"):  # the blocks running are named in both directions
        assert {p.module for p in timeline.points if p.phase == phase} >= {"layer1", "layer4"}, phase
    forward_end = dict(timeline.phase_ends())["forward"]
    assert forward_end.activations_bytes > 0  # saved for backward and live when forward ended
    assert forward_end.total_bytes > start.total_bytes
    peak = timeline.peak
    assert peak is not None
    step_peak = max(size for _, size in second.phase_peaks)  # rounded block sizes: at least the requested bytes
    assert 0.85 * step_peak <= peak.total_bytes <= step_peak
    before = _trace_length(device)
    keep = torch.empty(1024, device=device)
    assert _trace_length(device) == before  # recording is off: an allocation now leaves no trace
    del keep


def _trace_length(device: torch.device) -> int:
    traces = torch.cuda.memory._snapshot().get("device_traces") or []
    return len(traces[device.index]) if device.index < len(traces) else 0
