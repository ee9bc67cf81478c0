"""What crosses the connection whole (a comparison's events, a finder's trials and answer) comes back as the
very values it was, through real JSON; what the other side cannot have meant is refused, never built."""

from __future__ import annotations

import json
import math

import pytest
import torch

from gpu_train_monitor.base.text import Message
from gpu_train_monitor.compare.comparison import Comparison
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.events.events import ContenderEvent, LogMessage, RunFinished, StepsReported
from gpu_train_monitor.finder.search import BatchSizeResult, Trial, find_batch_size
from gpu_train_monitor.remote.wire.protocol import ProtocolError
from gpu_train_monitor.remote.wire.values import decode, encode
from tests.support.events import sample, started, summary


def through_json(value: object) -> object:
    return decode(json.loads(json.dumps(encode(value), allow_nan=False)))


def test_every_event_of_a_real_comparison_comes_back_equal() -> None:
    base = RunConfig(
        device="cpu", model="tiny-cnn", batch_size=8, max_steps=3, synthetic_samples=256, report_interval=0.01
    )
    events: list[object] = []
    comparison = Comparison(base, [{"batch_size": 8}, {"batch_size": 16}], [events.append])
    result = comparison.run()
    assert {type(e.event).__name__ for e in events if isinstance(e, ContenderEvent)} >= {
        "RunStarted",
        "StepsReported",
        "RunFinished",
    }
    for event in events:
        assert through_json(event) == event
    assert through_json(result) == result
    assert through_json(result).runs[1].label == "batch_size=16"


def test_a_diverged_runs_losses_and_a_translatable_message_survive() -> None:
    report = StepsReported(
        step=2,
        epoch=1,
        first_step=1,
        losses=(1.5, math.inf),
        samples=16,
        samples_per_s=100.0,
        elapsed_s=0.5,
        eta_s=None,
        batch_size=8,
        memory=sample(),
    )
    back = through_json(report)
    assert back.losses[0] == 1.5 and back.losses[1] == math.inf
    nan = through_json(math.nan)
    assert math.isnan(nan)
    text = Message("loss became {value} at step {step}", value="nan", step=2)
    finished = RunFinished("diverged", 2, text, False, summary(status="diverged"))
    back_finished = through_json(finished)
    assert back_finished == finished
    assert isinstance(back_finished.message, Message) and back_finished.message.template == text.template


def test_a_finder_answer_and_its_trials_come_back_equal() -> None:
    config = RunConfig(device="cpu", model="tiny-cnn")
    trials: list[Trial] = []
    result = find_batch_size(
        config,
        capacity=1_000_000,
        margin=0.0,
        measure=lambda _config, batch, _steps: 10_000 + 1_000 * batch,
        on_trial=trials.append,
        predict=None,
    )
    assert isinstance(result, BatchSizeResult) and trials
    assert through_json(result) == result
    assert [through_json(t) for t in trials] == trials


def test_a_reports_float32_losses_travel_packed_and_come_back_bit_exact() -> None:
    losses = tuple(float(x) for x in torch.randn(64).tolist()) + (math.nan, math.inf)
    encoded = json.dumps(encode(losses), allow_nan=False)
    assert "__f32__" in encoded and len(encoded) < 6 * len(losses) + 20  # 5.3 B a loss, not up to 24
    back = decode(json.loads(encoded))
    assert back[:64] == losses[:64] and math.isnan(back[64]) and back[65] == math.inf
    not_float32 = (0.1, 0.2, 0.3, 0.4)  # float64 values float32 would round: sent as they are
    assert decode(json.loads(json.dumps(encode(not_float32)))) == not_float32
    assert "__f32__" not in json.dumps(encode(not_float32))
    with pytest.raises(ProtocolError):
        decode({"__f32__": "AAA="})  # 2 bytes: no float32


def test_mappings_with_number_keys_and_a_run_started_config() -> None:
    assert through_json({1: 0.5, 2: 0.25}) == {1: 0.5, 2: 0.25}
    assert through_json(started(epochs=None)) == started(epochs=None)


def test_unknown_types_and_bad_values_are_refused() -> None:
    with pytest.raises(ProtocolError, match="unknown here"):
        decode({"__type__": "Popen", "args": ["sh"]})
    with pytest.raises(ProtocolError, match="cannot be built"):
        decode({"__type__": "LogMessage", "level": "info"})  # a field missing
    with pytest.raises(ProtocolError, match="cannot be built"):
        decode({"__type__": "RunConfig", "batch_size": -3})  # out of its bounds
    with pytest.raises(ProtocolError):
        decode({"__float__": "1e999"})
    with pytest.raises(TypeError):
        encode(object())
    # a field the other side knows and this version does not is left out
    assert decode({"__type__": "LogMessage", "level": "info", "text": "hi", "colour": "red"}) == LogMessage(
        "info", "hi"
    )


def test_every_dataclass_an_event_can_hold_is_one_the_connection_carries() -> None:
    """A value added to an event (a prediction's timeline, its modules) crosses the connection too: a comparison on
    a remote GPU fails with 'not a type the connection carries' otherwise."""
    import dataclasses
    import typing

    from gpu_train_monitor.remote.wire.values import known_types

    known = known_types()
    missing: set[str] = set()
    seen: set[type] = set()

    def visit(hint: object) -> None:
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            if hint in seen:
                return
            seen.add(hint)
            if known.get(hint.__name__) is not hint:
                missing.add(f"{hint.__module__}.{hint.__name__}")
            for field_hint in typing.get_type_hints(hint).values():
                visit(field_hint)
        for argument in typing.get_args(hint):
            visit(argument)

    for cls in list(known.values()):
        visit(cls)
    assert not missing
