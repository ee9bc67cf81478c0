"""A CUDA step's allocator trace read as a timeline (gpu_train_monitor.memory.allocator_timeline.trace_timeline),
on a trace written by hand in torch's format: blocks classed by holder, the previous step's gradients left out,
phase ends and modules placed by time. Recording itself needs CUDA: tests/gpu/test_step_timeline.py."""

from __future__ import annotations

import torch
from torch import nn

from gpu_train_monitor.events.module_bytes import OUTSIDE
from gpu_train_monitor.events.step_timeline import HOLDERS
from gpu_train_monitor.memory.allocator_timeline import AllocatorTimeline, trace_timeline
from gpu_train_monitor.memory.breakdown import StepMemoryRecorder
from gpu_train_monitor.memory.module_context import ModuleContext
from gpu_train_monitor.memory.probe import MemoryProbe
from gpu_train_monitor.memory.timeline_points import BlockNames

PARAMS, STATE, BATCH, GRAD = 0x1000, 0x2000, 0x3000, 0x4000
ACT1, TEMP1, ACT2, TEMP2 = 0x5000, 0x6000, 0x7000, 0x8000


def _event(action: str, addr: int, size: int, time_us: int) -> dict[str, object]:
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": time_us}


def _step() -> list[dict[str, object]]:
    return [
        _event("alloc", 0x9000, 8, 5),  # before recording began: dropped
        _event("free_requested", GRAD, 400, 10),  # the previous step's gradient freed by zero_grad
        _event("free_completed", GRAD, 400, 10),
        _event("alloc", ACT1, 200, 11),
        _event("alloc", TEMP1, 50, 12),
        _event("free_completed", TEMP1, 50, 13),
        _event("segment_alloc", 0xA0000, 2_097_152, 14),  # the cache grows: no tensor's bytes
        _event("alloc", ACT2, 300, 14),
        _event("alloc", GRAD, 400, 16),  # this step's gradient, in the block the last one had
        _event("free_completed", ACT2, 300, 17),
        _event("free_completed", ACT1, 200, 18),
        _event("alloc", TEMP2, 30, 20),
        _event("free_completed", TEMP2, 30, 21),
    ]


def _read(**changes: object) -> object:
    holders = {PARAMS: (0, 400), STATE: (2, 400), BATCH: (3, 100), GRAD: (1, 400)}
    marks = [("forward", 15), ("backward", 19), ("optimizer", 22)]
    modules = [(11, "layer1"), (14, "layer2"), (15, OUTSIDE)]
    arguments = {"since_us": 9, "holders": holders, "saved": {ACT1, ACT2, TEMP2}, "marks": marks, "modules": modules}
    return trace_timeline(_step(), **{**arguments, **changes})  # type: ignore[arg-type]


def test_each_block_counts_in_its_holder_from_start_to_end() -> None:
    timeline = _read()
    totals = [point.total_bytes for point in timeline.points]
    assert totals == [900, 1100, 1150, 1100, 1400, 1800, 1500, 1300, 1330, 1300]
    assert timeline.events == 9 and timeline.peak is not None and timeline.peak.total_bytes == 1800
    start = timeline.points[0]
    assert (start.params_bytes, start.optimizer_bytes, start.batch_bytes, start.grads_bytes) == (400, 400, 100, 0)
    at_forward_end = timeline.points[4]
    assert at_forward_end.activations_bytes == 500 and at_forward_end.temporaries_bytes == 0
    assert timeline.points[2].temporaries_bytes == 50  # made and freed in forward, never saved
    assert timeline.points[8].temporaries_bytes == 30  # saved at an address, but not live when forward ended
    assert timeline.points[-1].grads_bytes == 400 and timeline.points[-1].activations_bytes == 0
    assert sum(getattr(timeline.points[-1], key) for key in HOLDERS) == 1300


def test_phase_ends_and_modules_are_placed_by_time() -> None:
    timeline = _read()
    assert [(phase, point.index) for phase, point in timeline.phase_ends()] == [
        ("forward", 4),
        ("backward", 7),
        ("optimizer", 9),
    ]
    phases = [point.phase for point in timeline.points]
    assert phases == ["forward"] * 5 + ["backward"] * 3 + ["optimizer"] * 2
    modules = [point.module for point in timeline.points]
    assert modules[:5] == [OUTSIDE, "layer1", "layer1", "layer1", "layer2"]
    assert set(modules[5:]) == {OUTSIDE}


def test_a_long_trace_keeps_its_peak_and_phase_ends_within_the_points_asked() -> None:
    events, time_us = [], 100
    for i in range(3000):  # a forward of 3000 blocks kept, then a backward freeing them
        events.append(_event("alloc", 0x10000 + 16 * i, 16, time_us + i))
    for i in range(3000):
        events.append(_event("free_completed", 0x10000 + 16 * i, 16, time_us + 3000 + i))
    saved = {0x10000 + 16 * i for i in range(3000)}
    timeline = trace_timeline(events, 0, {}, saved, [("forward", 3099), ("backward", 7000)], max_points=200)
    assert len(timeline.points) <= 230 and timeline.events == 6000
    assert timeline.peak is not None and timeline.peak.activations_bytes == 3000 * 16
    assert [(phase, point.index) for phase, point in timeline.phase_ends()] == [("forward", 3000), ("backward", 6000)]


def test_a_trace_on_another_clock_keeps_every_event_and_claims_no_phase_ends() -> None:
    shifted = [{**event, "time_us": int(event["time_us"]) - 10**12} for event in _step()]  # type: ignore[call-overload]
    timeline = trace_timeline(shifted, 9, {PARAMS: (0, 400)}, set(), [("forward", 15)], [(11, "layer1")])
    assert timeline.events == 10 and timeline.ends == () and timeline.points[0].params_bytes == 400
    assert {point.module for point in timeline.points} == {OUTSIDE}


def test_a_cpu_recorder_records_no_allocator_timeline() -> None:
    recorder = StepMemoryRecorder(MemoryProbe("cpu"))
    assert not recorder.timeline and not AllocatorTimeline.supported(torch.device("cpu"))


def test_a_real_steps_modules_are_told_in_forward_order_and_back_in_backward() -> None:
    """What a recorded CUDA step is told of its modules (a context of every module, following backward too), on a
    real CPU step: each change of module named by its block, forward in order, backward in reverse."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 2))
    names = BlockNames(model)
    told: list[str] = []
    with ModuleContext(backward=True) as context:
        context.on_change = lambda: told.append(names.of(context.current()))
        loss = model(torch.randn(4, 8, requires_grad=False)).sum()
        forward = [name for name in told if name != OUTSIDE]
        told.clear()
        loss.backward()
        context.clear()
    root = names.of(model)  # the model itself, running around its blocks
    backward = [name for name in told if name not in (OUTSIDE, root)]
    order = [name for name in dict.fromkeys(forward) if name != root]
    assert len(order) == 5 and order == [names.of(m) for m in model]
    assert list(dict.fromkeys(backward)) == order[::-1][: len(dict.fromkeys(backward))] and len(set(backward)) >= 4
