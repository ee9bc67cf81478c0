"""The GPT trains as every run does: bf16 autocast, activation checkpointing per block (the same losses, less held),
plain attention (the same losses as the fused one), torch.compile; and its memory is predicted within 10% of the
same step run for real on the CPU and counted the same way."""

from __future__ import annotations

import pytest
import torch

from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.device.fast_paths import compile_problem
from gpu_train_monitor.engine.prediction import measure, predict
from gpu_train_monitor.engine.session import TrainingSession
from gpu_train_monitor.events.events import Event, MemoryBreakdown, RunFinished, RunStarted, StepsReported

GPT = dict(
    device="cpu",
    model="gpt-tiny",
    dataset="synthetic-text",
    synthetic_samples=256,
    seq_len=32,
    batch_size=16,
    max_steps=3,
    report_interval=0.01,
)


def run(**overrides: object) -> list[Event]:
    events: list[Event] = []
    TrainingSession(RunConfig(**{**GPT, **overrides}), [events.append]).run()  # type: ignore[arg-type]
    return events


def finished(events: list[Event]) -> RunFinished:
    (end,) = (event for event in events if isinstance(event, RunFinished))
    assert end.status == "completed", end.message
    return end


def losses(events: list[Event]) -> list[float]:
    return [loss for event in events if isinstance(event, StepsReported) for loss in event.losses]


def test_checkpointing_each_block_trains_the_same_losses_holding_less() -> None:
    plain, checkpointed = run(), run(activation_checkpointing=True)
    finished(checkpointed)
    assert losses(checkpointed) == losses(plain) and len(losses(plain)) == 3
    held = [
        max(e.activations_bytes for e in events if isinstance(e, MemoryBreakdown)) for events in (plain, checkpointed)
    ]
    assert 0 < held[1] < 0.75 * held[0]


def test_plain_attention_trains_what_the_fused_one_does() -> None:
    fused, plain = run(), run(attention="plain")
    assert losses(plain) == pytest.approx(losses(fused), rel=1e-4)


def test_bf16_autocast_trains_a_text_run() -> None:
    events = run(amp="bf16")
    end = finished(events)
    assert end.summary.config["amp"] == "bf16" and all(loss == loss for loss in losses(events))
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.config["seq_len"] == 32


@pytest.mark.slow  # Inductor compiles the step: a minute or two on a shared 2-core machine
def test_compile_trains_a_text_run() -> None:
    problem = compile_problem(torch.device("cpu"))
    if problem:
        pytest.skip(problem)
    try:
        events = run(compile=True, layers=1, width=32, max_steps=4)
    finally:
        torch._dynamo.reset()  # the compiled code lives in this process: later tests start without it
    end = finished(events)
    assert end.summary.compile_s and end.summary.compile_s > 0 and len(losses(events)) == 4


CONFIG = RunConfig(**{**GPT, "max_steps": None})


@pytest.mark.parametrize(
    ("batch", "overrides"),
    [
        (8, {}),
        (24, {}),
        (16, {"attention": "plain"}),
        (16, {"amp": "bf16"}),
        (16, {"activation_checkpointing": True}),
        (16, {"optimizer": "adamw", "layers": 3, "width": 48, "heads": 4}),
    ],
)
def test_the_gpt_is_predicted_within_10_percent_of_its_measured_step(batch: int, overrides: dict) -> None:
    predicted = predict(CONFIG, batch, **overrides)
    measured = measure(CONFIG, batch, **overrides)
    assert abs(predicted.peak_bytes / measured.peak_bytes - 1) < 0.10, (predicted.peak_bytes, measured.peak_bytes)
    assert predicted.batch_size == batch


def test_a_longer_sequence_is_predicted_to_hold_more() -> None:
    short, long = predict(CONFIG, 8, seq_len=32), predict(CONFIG, 8, seq_len=128)
    assert long.activations_bytes > 3 * short.activations_bytes  # every layer's activations grow with the tokens
