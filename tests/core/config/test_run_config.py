"""RunConfig and its one bounds table: what is accepted, what is refused, and what the refusal says."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from gpu_train_monitor.base.errors import ConfigError, UserError
from gpu_train_monitor.config.bounds import BOUNDS
from gpu_train_monitor.config.field_checks import describe_range, validate_field
from gpu_train_monitor.config.run_config import RunConfig
from gpu_train_monitor.config.sequences import SIZE_FIELDS

NUMERIC = [name for name, bound in BOUNDS.items() if bound.kind in (int, float)]
CHOICES = [name for name, bound in BOUNDS.items() if bound.choices]
BOOLS = [name for name, bound in BOUNDS.items() if bound.kind is bool]


def test_every_field_has_a_bound_and_the_defaults_are_valid() -> None:
    fields = {f.name for f in dataclasses.fields(RunConfig)}
    assert fields == set(BOUNDS)
    config = RunConfig()
    for name, bound in BOUNDS.items():
        assert getattr(config, name) == bound.default


@pytest.mark.parametrize("name", NUMERIC)
def test_numeric_fields_accept_their_limits(name: str) -> None:
    bound = BOUNDS[name]
    for limit in (bound.minimum, bound.maximum):
        value = bound.kind(limit)
        batch = {"batch_size": value} if name == "nproc" else {}  # a data-parallel batch splits evenly
        if name in SIZE_FIELDS:  # a GPT's size: of a GPT, whose width splits over its heads
            batch = {"model": "gpt-tiny", "dataset": "synthetic-text", **({"width": 1024} if name == "heads" else {})}
        assert getattr(RunConfig(**{name: value, **batch}), name) == value


@pytest.mark.parametrize("name", NUMERIC)
def test_numeric_fields_refuse_values_past_their_limits_naming_field_and_range(name: str) -> None:
    bound = BOUNDS[name]
    step = 1 if bound.kind is int else max(abs(bound.minimum) * 0.5, 1e-9)
    for value in (bound.kind(bound.minimum - step), bound.kind(bound.maximum + step)):
        with pytest.raises(ConfigError) as info:
            RunConfig(**{name: value})
        assert info.value.field == name
        message = str(info.value)
        assert message.startswith(f"{name}: ")
        assert describe_range(name) in message
        assert repr(value) in message


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 10**400, 2.5, "64", True])
def test_integer_fields_refuse_non_integers_with_a_config_error(value: object) -> None:
    with pytest.raises(ConfigError) as info:
        RunConfig(batch_size=value)  # type: ignore[arg-type]
    assert info.value.field == "batch_size"
    assert "an integer from 1 to 65536" in str(info.value)


def test_integer_fields_accept_whole_floats_as_integers() -> None:
    config = RunConfig(batch_size=64.0)  # type: ignore[arg-type]
    assert config.batch_size == 64 and isinstance(config.batch_size, int)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "0.1", None, False])
def test_float_fields_refuse_non_finite_and_non_numbers(value: object) -> None:
    with pytest.raises(ConfigError) as info:
        RunConfig(lr=value)  # type: ignore[arg-type]
    assert info.value.field == "lr"


def test_lr_message_spells_out_the_range() -> None:
    with pytest.raises(ConfigError, match=r"lr: must be a number from 1e-08 to 10, got -1"):
        RunConfig(lr=-1)


@pytest.mark.parametrize("name", CHOICES)
def test_choice_fields_accept_each_choice_and_refuse_others_listing_them(name: str) -> None:
    for choice in BOUNDS[name].choices or ():
        assert getattr(RunConfig(**{name: choice}), name) == choice
    with pytest.raises(ConfigError) as info:
        RunConfig(**{name: "no-such-choice"})
    assert info.value.field == name
    for choice in BOUNDS[name].choices or ():
        assert choice in str(info.value)


@pytest.mark.parametrize("name", BOOLS)
def test_bool_fields_refuse_strings_and_numbers(name: str) -> None:
    for value in ("yes", 1, None):
        with pytest.raises(ConfigError) as info:
            RunConfig(**{name: value})
        assert info.value.field == name


def test_optional_fields_accept_none_and_required_ones_do_not() -> None:
    assert RunConfig(max_steps=None, data_dir=None).max_steps is None
    with pytest.raises(ConfigError, match="batch_size: a value is required"):
        RunConfig(batch_size=None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="max_steps"):
        RunConfig(max_steps=0)


def test_strings_are_trimmed_model_lowercased_and_data_dir_expanded() -> None:
    config = RunConfig(device=" cpu ", model=" ResNet18 ", data_dir="~/datasets")
    assert config.device == "cpu"
    assert config.model == "resnet18"
    assert config.data_dir == str(Path(os.path.expanduser("~")) / "datasets")
    for bad in ("", "   "):
        with pytest.raises(ConfigError, match="device"):
            RunConfig(device=bad)


def test_config_is_frozen_and_replace_validates_again() -> None:
    config = RunConfig(batch_size=32)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.batch_size = 64  # type: ignore[misc]
    assert config.replace(batch_size=64).batch_size == 64
    assert config.batch_size == 32
    with pytest.raises(ConfigError, match="batch_size"):
        config.replace(batch_size=0)


def test_saved_settings_round_trip_and_unknown_keys_are_ignored() -> None:
    config = RunConfig(model="tiny-cnn", batch_size=16, lr=0.001, optimizer="adamw", max_steps=5, channels_last=True)
    saved = config.to_dict()
    assert RunConfig.from_dict(saved) == config
    assert RunConfig.from_dict({**saved, "from_a_future_version": 1}) == config
    with pytest.raises(ConfigError, match="epochs"):
        RunConfig.from_dict({**saved, "epochs": 0})


def test_config_error_is_a_user_error() -> None:
    with pytest.raises(UserError):
        validate_field("workers", -1)


def test_describe_range_reads_the_table() -> None:
    assert describe_range("batch_size") == "an integer from 1 to 65536"
    assert describe_range("optimizer") == "one of sgd, adamw"
    assert describe_range("channels_last") == "true or false"
    assert describe_range("momentum") == "a number from 0 to 0.999"


def test_finder_options_have_their_bounds_in_the_table_and_batches_stay_runnable() -> None:
    from gpu_train_monitor.config.bounds import FINDER_BOUNDS

    assert set(FINDER_BOUNDS) == {"margin", "start", "max_batch"}
    assert not set(FINDER_BOUNDS) & set(BOUNDS)  # one namespace: validate_field takes either
    # the finder may only answer a batch size that `run --batch-size` accepts
    assert FINDER_BOUNDS["max_batch"].maximum == BOUNDS["batch_size"].maximum == FINDER_BOUNDS["max_batch"].default
    assert FINDER_BOUNDS["start"].maximum == BOUNDS["batch_size"].maximum
    assert describe_range("margin") == "a number from 0 to 0.99"
    assert describe_range("max_batch") == "an integer from 1 to 65536"
    for name, bound in FINDER_BOUNDS.items():
        assert validate_field(name, bound.default) == bound.default


@pytest.mark.parametrize(
    ("name", "value"), [("margin", 1.0), ("margin", float("nan")), ("max_batch", 0), ("max_batch", 65537), ("start", 0)]
)
def test_finder_options_out_of_range_name_themselves(name: str, value: float) -> None:
    with pytest.raises(ConfigError) as info:
        validate_field(name, value)
    assert info.value.field == name
    assert describe_range(name) in str(info.value)
